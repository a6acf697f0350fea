"""Comparing two stored runs: `compare()` and what it returns.

- `compare_runs`: `compare()` and `default_runs()`, the entry point, as named steps.
- `frame`: a run as the comparison reads it, and one side of a comparison.
- `stats`: the numbers, vectorized over conditions (rates, tests, q-values, MDEs).
- `sequential`: the p-values of a run swept with --stop-when-settled.
- `verdicts`: per-outcome results -> each condition's verdict and the headline.
- `result`: the frozen result types (public), which the renderers draw.

The names below are imported on first use, as in `poisson_prove/__init__.py`: a renderer that
needs only the result types (`poisson_prove.comparison.result`) must not load NumPy and pyarrow
behind `compare()`, so that `diff --help` stays instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from poisson_prove.comparison.compare_runs import METHODS, compare, default_runs
    from poisson_prove.comparison.result import (
        Comparison,
        ConditionResult,
        CoverageRow,
        ErrorCount,
        Headline,
        HeadlineCount,
        OutcomeResult,
        Rate,
        RunSide,
    )

_RESULT = "poisson_prove.comparison.result"
_ENTRY = "poisson_prove.comparison.compare_runs"
# public name -> the module that defines it
_LAZY = {
    "METHODS": _ENTRY,
    "compare": _ENTRY,
    "default_runs": _ENTRY,
    **{
        name: _RESULT
        for name in (
            "Comparison", "ConditionResult", "CoverageRow", "ErrorCount", "Headline", "HeadlineCount",
            "OutcomeResult", "Rate", "RunSide",
        )
    },
}

__all__ = [
    "METHODS",
    "Comparison",
    "ConditionResult",
    "CoverageRow",
    "ErrorCount",
    "Headline",
    "HeadlineCount",
    "OutcomeResult",
    "Rate",
    "RunSide",
    "compare",
    "default_runs",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'poisson_prove.comparison' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
