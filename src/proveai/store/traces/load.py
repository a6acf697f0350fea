"""Loading one stored trace file (OTLP JSON) into a closed Trace."""

from __future__ import annotations

import json
import os
from pathlib import Path

from proveai.errors import ProveAIError
from proveai.traces.otlp import decode_trace
from proveai.traces.trace import Trace


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """A closed Trace from one OTLP JSON trace file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProveAIError(
            f"no trace file at {file}", suggestions=["proveai status  (lists stored traces)"]
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProveAIError(f"cannot read trace file {file}: {exc}") from exc
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ProveAIError(f"{file} is not JSON: {exc}") from exc
    if not isinstance(document, dict) or "resourceSpans" not in document:
        raise ProveAIError(f"{file} is not an OTLP JSON trace (no resourceSpans)")
    fallback = file.name[: -len(".json")] if file.name.endswith(".json") else file.name
    try:
        return decode_trace(document, fallback)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
        raise ProveAIError(f"{file} is not a well-formed OTLP JSON trace: {problem}") from exc
