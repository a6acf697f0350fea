"""The one context variable capture hangs on: the open frame (a Trace or a span builder).

Outside a trace it holds None, so `@monitor` costs one ContextVar lookup and the plain call.
contextvars (not thread-locals) make asyncio tasks and copied contexts keep their own parents.
It lives with the trace data so the providers layer can record onto the open span without
importing the capture machinery above it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol

FRAME: ContextVar[Any] = ContextVar("proveai_frame", default=None)


class OpenSpan(Protocol):
    """What a provider records on: the span open in this context (capture.monitor's SpanBuilder)."""

    def record_llm_call(
        self,
        request_messages: list[dict[str, Any]],
        response: str | list[dict[str, Any]] | None,
        model: str | None = None,
        usage: dict[str, int] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None: ...


def current_span() -> OpenSpan | None:
    """The span builder open in this context (providers record LLM calls on it), or None.

    A frame is either a live Trace (its own `_owner`) or a span builder inside one.
    """
    frame = FRAME.get()
    if frame is None or frame is getattr(frame, "_owner", None):
        return None
    return frame
