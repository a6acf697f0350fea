"""Prove: did a change to an LLM agent really change how often it fails?

Public names only; each lives in its own module and is imported on first use, so that
`import poisson_prove` (and every `--help`) stays instant.
"""

from __future__ import annotations

import importlib
from typing import Any

from poisson_prove.episode import Episode
from poisson_prove.errors import ProveError

__version__ = "0.1.0"

_LAZY = {
    "record": "poisson_prove.traces",
    "step": "poisson_prove.traces",
    "run_sweep": "poisson_prove.sweep",
    "compare": "poisson_prove.compare",
    "load_run": "poisson_prove.store",
    "RunStore": "poisson_prove.store",
}

__all__ = ["Episode", "ProveError", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'poisson_prove' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
