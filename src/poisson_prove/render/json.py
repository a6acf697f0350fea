"""Results as JSON documents with a schema id: every number of the result, nothing drawn."""

from __future__ import annotations

import json as _json
import math
from collections.abc import Sequence
from typing import Any

from poisson_prove.comparison.result import Comparison

DIFF_SCHEMA = "poisson-prove.diff/1"
INSPECT_SCHEMA = "poisson-prove.inspect/1"


def _finite(value: Any) -> Any:
    """NaN and infinities become null: JSON has no spelling for them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dumps(document: dict[str, Any]) -> str:
    return _json.dumps(_finite(document), ensure_ascii=False, allow_nan=False, indent=2) + "\n"


def comparison_document(
    comparison: Comparison, *, notes: Sequence[str] = (), command: str = "diff", exit_code: int = 0
) -> dict[str, Any]:
    return {
        "schema": DIFF_SCHEMA,
        "command": command,
        "exit_code": exit_code,
        **comparison.to_dict(),
        "notes": list(notes),
    }
