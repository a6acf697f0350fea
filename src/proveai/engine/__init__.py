"""The detection engine: the ProveAI client, @on_detection, and the local engine it talks to.

The client needs only httpx (plus httpx-sse for the stream); the server (`proveai engine
serve`) needs the `engine` extra: starlette and uvicorn. Names are imported on first use so
that `proveai --help` (which registers `proveai engine`) loads none of them.
"""

from __future__ import annotations

import importlib
from typing import Any

DEFAULT_PORT = 19000

_LAZY = {
    "ProveAI": "proveai.engine.client",
    "on_detection": "proveai.engine.handlers",
    "clear_handlers": "proveai.engine.handlers",
    "LAYERS": "proveai.engine.model",
    "AnalyzeResponse": "proveai.engine.model",
    "Diagnosis": "proveai.engine.model",
    "LayerResult": "proveai.engine.model",
    "PropagationLink": "proveai.engine.model",
}

__all__ = ["DEFAULT_PORT", *_LAZY]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'proveai.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
