"""Comparing two stored runs: `compare()` and what it returns.

- `compare_runs`: `compare()` and `default_runs()`, the entry point, as named steps.
- `frame`: a run as the comparison reads it, and one side of a comparison.
- `stats`: the numbers, vectorized over conditions (rates, tests, q-values, MDEs).
- `sequential`: the p-values of a run swept with --stop-when-settled.
- `verdicts`: per-outcome results -> each condition's verdict and the headline.
- `result`: the frozen result types (public), which the renderers draw.
"""

from __future__ import annotations

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
