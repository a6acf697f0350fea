"""The detection engine: the ProveAI client, @on_detection, and the local engine it talks to.

The client needs only httpx (plus httpx-sse for the stream); the server (`proveai engine
serve`) needs the `engine` extra: starlette and uvicorn.
"""

from __future__ import annotations

from proveai.engine.client import ProveAI
from proveai.engine.handlers import clear_handlers, on_detection
from proveai.engine.model import LAYERS, AnalyzeResponse, Diagnosis, LayerResult, PropagationLink

__all__ = [
    "LAYERS", "AnalyzeResponse", "Diagnosis", "LayerResult", "PropagationLink", "ProveAI",
    "clear_handlers", "on_detection",
]
