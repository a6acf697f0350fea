"""Where episodes run. Every backend implements `Executor` (backends/base.py).

`make_executor` is the one place that maps a backend name and its settings to an executor;
`estimate_cost` gives the plan's cost line. Backends with optional SDKs are imported only
when chosen, and a missing extra is a ProveError naming the `pip install` line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from poisson_prove.backends.base import Executor, Job, Task

BACKENDS = ("local", "modal", "burla")

__all__ = ["BACKENDS", "Executor", "Job", "Task", "estimate_cost", "make_executor"]


def make_executor(backend: str, settings: Mapping[str, Any]) -> Executor:
    """The executor for `backend`, configured by its spec table merged with CLI overrides."""
    if backend == "local":
        from poisson_prove.backends.local import LocalExecutor

        return LocalExecutor()
    from poisson_prove.errors import ProveError

    raise ProveError(f"--backend {backend} is not available in this version")


def estimate_cost(backend: str, rollouts: int, settings: Mapping[str, Any]) -> float:
    """The plan's cost estimate in USD ($0 on this machine)."""
    return 0.0
