"""Comparing two stored runs: `compare()` and what it returns.

- `compare_runs`: `compare()` and `default_runs()`, the entry point, as named steps.
- `frame`: a run as the comparison reads it, and one side of a comparison.
- `stats`: the numbers, vectorized over conditions (rates, tests, q-values, MDEs).
- `sequential`: the p-values of a run swept with --stop-when-settled.
- `pooled`: runs with a case axis (benchmarks): the pooled rows, counted by case, and the cases.
- `verdicts`: per-outcome results -> each condition's verdict and the headline.
- `any_failure`: the union of the failure outcomes, a row per condition tested as a family of its own.
- `result`: the frozen result types (public), which the renderers draw.
- `gate`: the CI gate's three-valued verdict on a comparison (`check`).

The names below are imported on first use (`prove_common.lazy`), as in `poisson_prove/__init__.py`:
a renderer that needs only the result types (`poisson_prove.comparison.result`) must not load
NumPy and pyarrow behind `compare()`, so that `diff --help` stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prove_common.lazy import lazy_exports

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

_ENTRY = "poisson_prove.comparison.compare_runs"
_RESULT = "poisson_prove.comparison.result"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **{name: f"{_ENTRY}:{name}" for name in ("METHODS", "compare", "default_runs")},
        **{
            name: f"{_RESULT}:{name}"
            for name in (
                "Comparison", "ConditionResult", "CoverageRow", "ErrorCount", "Headline", "HeadlineCount",
                "OutcomeResult", "Rate", "RunSide",
            )
        },
    },
)
