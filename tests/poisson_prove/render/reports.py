"""A comparison the render tests draw: a trade in one condition, a rise in the other."""

from __future__ import annotations

from pathlib import Path

import poisson_prove
from poisson_prove.comparison.result import Comparison
from tests.poisson_prove.runs import from_outcomes, write_run

N = 200
SUMMARY = [
    "trade unresolved: 1 safer, 1 worse · timeout: 0 safer, 1 worse (paired test on shared seeds); "
    "2 conditions by 20 steps, q 0.05",
    "method paired test on shared seeds (McNemar), the default for runs paired at sweep time",
    "before a",
    "after b",
    "trade ticket refund · temperature 0.0: unresolved fell, timeout rose",
]


def outcomes(**counts: int) -> list[str | None]:
    out: list[str | None] = []
    for name, count in counts.items():
        out += [None if name == "error" else name] * count
    return out + ["resolved"] * (N - len(out))


def two_conditions(tmp_path: Path) -> Comparison:
    """A trade in one condition, a rise in the other, four episodes without an outcome."""
    before = {("refund", 0.0): outcomes(unresolved=80), ("password", 0.5): outcomes(unresolved=20, error=4)}
    after = {("refund", 0.0): outcomes(unresolved=10, timeout=70), ("password", 0.5): outcomes(unresolved=70)}
    a = write_run(tmp_path, from_outcomes(before), name="a")
    write_run(tmp_path, from_outcomes(after), name="b", paired_with=a)
    return poisson_prove.compare("a", "b", store=tmp_path)
