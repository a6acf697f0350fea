"""Prove: did a change to an LLM agent really change how often it fails?

The public names, listed in `__all__`. Each lives in its own module and is imported on first
use, so that `import poisson_prove` (and every `--help`) stays instant; type checkers see the
explicit imports below.

`poisson_prove.compare` is the function, whatever was imported first (no module shares its
name); `default_runs` and the result types live in the package `poisson_prove.comparison`.

Layers, lowest first. A module imports only from its own package or module and from lower
layers, never sideways within its layer (tests/poisson_prove/test_layers.py holds this, for
imports at the top of a module and inside functions alike); this file, the public map, sits
above them all and nothing imports it.

0. errors, version: the one error type and the exit codes; the version
1. shared: building blocks both packages use (the CLI app, console, tables,
   progress, "did you mean")
2. data: episode, conditions, seeding, episode_table, recording (`record`/`step`), row_json,
   span_trail, stats, isolation
3. columns (reading stored columns), span_stream, capture, chaos, backends.tables,
   backends.pricing
4. spec, run_checks (checking a stored run), execute (one episode; a backend's job and task)
5. store, backends (the executors)
6. plan, comparison (`compare()`), inspection, importers
7. sweep (preparing, running, settling, budgeting a sweep), gate (the CI verdict)
8. render (text and JSON), dashboard
9. cli, examples
10. __main__
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from poisson_prove.episode import Episode
from poisson_prove.errors import ProveError
from poisson_prove.version import __version__

if TYPE_CHECKING:
    from poisson_prove.comparison import Comparison, ConditionResult, Headline, OutcomeResult, compare
    from poisson_prove.recording import record, step
    from poisson_prove.store import RunInfo, RunStore, load_run
    from poisson_prove.sweep import SweepResult, run_sweep


# public name -> (module, attribute); attribute None: the module itself
_LAZY: dict[str, tuple[str, str | None]] = {
    "record": ("poisson_prove.recording", "record"),
    "step": ("poisson_prove.recording", "step"),
    "run_sweep": ("poisson_prove.sweep", "run_sweep"),
    "SweepResult": ("poisson_prove.sweep", "SweepResult"),
    "compare": ("poisson_prove.comparison", "compare"),
    "Comparison": ("poisson_prove.comparison", "Comparison"),
    "ConditionResult": ("poisson_prove.comparison", "ConditionResult"),
    "OutcomeResult": ("poisson_prove.comparison", "OutcomeResult"),
    "Headline": ("poisson_prove.comparison", "Headline"),
    "load_run": ("poisson_prove.store", "load_run"),
    "RunStore": ("poisson_prove.store", "RunStore"),
    "RunInfo": ("poisson_prove.store", "RunInfo"),
}

__all__ = [
    "Comparison",
    "ConditionResult",
    "Episode",
    "Headline",
    "OutcomeResult",
    "ProveError",
    "RunInfo",
    "RunStore",
    "SweepResult",
    "__version__",
    "compare",
    "load_run",
    "record",
    "run_sweep",
    "step",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'poisson_prove' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
