"""`@on_detection`: callbacks fired with each AnalyzeResponse that detected something.

A handler registered with `severity="high"` fires when at least one diagnosis is high or
critical (severity is a floor, critical > high > medium > low) and, with `min_confidence`,
at least that confident; it receives the response narrowed to those diagnoses and links.
A handler that raises is logged (logger "proveai.engine") and never breaks the caller.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proveai.engine.model import SEVERITIES, AnalyzeResponse, Diagnosis, PropagationLink

logger = logging.getLogger("proveai.engine")


@dataclass(frozen=True)
class DetectionHandler:
    fn: Callable[[AnalyzeResponse], Any]
    severity: str | None = None
    min_confidence: float = 0.0
    agent_name: str | None = None
    failure_mode: str | None = None


_handlers: list[DetectionHandler] = []
_lock = threading.Lock()


def on_detection(
    fn: Callable[[AnalyzeResponse], Any] | None = None,
    *,
    severity: str | None = None,
    min_confidence: float = 0.0,
    agent_name: str | None = None,
    failure_mode: str | None = None,
) -> Any:
    """Register a detection callback, as `@on_detection(...)`, `@on_detection` or a call."""
    if severity is not None and severity not in SEVERITIES:
        raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, not {severity!r}")
    if not isinstance(min_confidence, int | float) or not 0.0 <= float(min_confidence) <= 1.0:
        raise ValueError(f"min_confidence must be a number from 0 to 1, not {min_confidence!r}")

    def register(handler: Callable[[AnalyzeResponse], Any]) -> Callable[[AnalyzeResponse], Any]:
        if not callable(handler):
            raise TypeError("on_detection needs a function that takes the AnalyzeResponse")
        with _lock:
            _handlers.append(
                DetectionHandler(handler, severity, float(min_confidence), agent_name, failure_mode)
            )
        return handler

    return register(fn) if fn is not None else register


def clear_handlers() -> None:
    """Forget every registered handler (for tests and long-lived processes that re-register)."""
    with _lock:
        _handlers.clear()


def _view(handler: DetectionHandler, response: AnalyzeResponse) -> AnalyzeResponse | None:
    view = response.filtered(handler.severity, handler.min_confidence)
    if handler.agent_name is not None or handler.failure_mode is not None:
        def keep(item: Diagnosis | PropagationLink) -> bool:
            return (handler.agent_name in (None, item.agent_name)) and (
                handler.failure_mode is None or handler.failure_mode in item.failure_modes
            )

        view = dataclasses.replace(
            view, diagnoses=tuple(d for d in view.diagnoses if keep(d)),
            propagation=tuple(p for p in view.propagation if keep(p)),
        )
    return view if view.diagnoses else None


def fire(response: AnalyzeResponse) -> int:
    """Call every matching handler; returns how many ran without raising."""
    if not response.detected:
        return 0
    with _lock:
        handlers = list(_handlers)
    ran = 0
    for handler in handlers:
        view = _view(handler, response)
        if view is None:
            continue
        name = getattr(handler.fn, "__qualname__", repr(handler.fn))
        try:
            handler.fn(view)
            ran += 1
        except Exception as exc:
            logger.error(
                "on_detection handler %s raised %s: %s (trace %s; the analysis is unaffected)",
                name, type(exc).__name__, exc, response.trace_id,
            )
            logger.debug("traceback of handler %s", name, exc_info=True)
    return ran
