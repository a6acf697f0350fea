"""The one context variable capture hangs on: the open frame (a Trace or a span builder).

Outside a trace it holds None, so `@monitor` costs one ContextVar lookup and the plain call.
contextvars (not thread-locals) make asyncio tasks and copied contexts keep their own parents.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

FRAME: ContextVar[Any] = ContextVar("proveai_frame", default=None)
