"""The detection engine: the ProveAI client, @on_detection, and the local engine it talks to.

The client needs only httpx (plus httpx-sse for the stream); the server (`proveai engine
serve`) needs the `engine` extra: starlette and uvicorn. Names are imported on first use
(`prove_common.lazy`) so that `proveai --help` (which registers `proveai engine`) loads none of
them; type checkers see the explicit imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prove_common.lazy import lazy_exports

if TYPE_CHECKING:
    from proveai.engine.client import ProveAI
    from proveai.engine.handlers import clear_handlers, on_detection
    from proveai.engine.model import LAYERS, AnalyzeResponse, Diagnosis, LayerResult, PropagationLink

DEFAULT_PORT = 19000

__all__ = [
    "DEFAULT_PORT",
    "LAYERS",
    "AnalyzeResponse",
    "Diagnosis",
    "LayerResult",
    "PropagationLink",
    "ProveAI",
    "clear_handlers",
    "on_detection",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ProveAI": "proveai.engine.client:ProveAI",
        "on_detection": "proveai.engine.handlers:on_detection",
        "clear_handlers": "proveai.engine.handlers:clear_handlers",
        **{
            name: f"proveai.engine.model:{name}"
            for name in ("LAYERS", "AnalyzeResponse", "Diagnosis", "LayerResult", "PropagationLink")
        },
    },
)
