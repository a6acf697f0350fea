"""The immutable result of a comparison: what the text, JSON and HTML renderers draw.

Every number here follows STATISTICS.md; nothing in this module computes, it only holds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from poisson_prove.store.compared import side_entry

METHOD_PHRASES = {
    "mcnemar": "paired test on shared seeds",
    "fisher": "Fisher exact test on independent runs",
    "logrank_bh": "cause-specific log-rank test",
}
METHOD_NAMES = {
    "mcnemar": "McNemar",
    "fisher": "Fisher",
    "logrank_bh": "logrank_bh",
}


@dataclass(frozen=True)
class RunSide:
    """One of the two runs, as the comparison read it."""

    run_id: str
    name: str
    target: str | None
    status: str
    done: int  # stored episodes, with or without an outcome
    without_outcome: int
    planned: int | None
    created: str
    resumed_at: tuple[str, ...]
    horizon: float
    salt: str | None
    paired_with: str | None


@dataclass(frozen=True)
class Rate:
    """An event's share by the common horizon in one run of one condition.

    `share` is the Aalen-Johansen cumulative incidence (k/n when nothing was censored before
    the horizon); the interval is 95% Wilson on k/n, or on the effective n F(1-F)/Var(F)
    when `starred` (censored before the horizon).
    """

    n: int
    k: int
    share: float | None
    lo: float | None
    hi: float | None
    starred: bool
    variance: float | None
    effective_n: float | None


@dataclass(frozen=True)
class OutcomeResult:
    """One test: one event in one condition."""

    outcome: str
    before: Rate
    after: Rate
    pairs: int | None  # McNemar: episodes joined on (condition, replicate, seed)
    b: int | None  # McNemar: the event before only (the twin after did not have it)
    c: int | None  # McNemar: the event after only
    statistic: float | None  # log-rank chi-square
    p: float | None
    p_exact: float | None  # McNemar's exact p beside the mid-p
    q_value: float | None  # Benjamini-Hochberg over all tests of the comparison
    verdict: str  # rose | fell | no change | not tested
    mde_rise: float | None  # for "no change": the smallest rise this row could have shown
    mde_fall: float | None
    note: str | None


@dataclass(frozen=True)
class ConditionResult:
    key: str
    label: str
    verdict: str  # worse | safer | trade | no change | not tested
    fell: tuple[str, ...]
    rose: tuple[str, ...]
    outcomes: tuple[OutcomeResult, ...]


@dataclass(frozen=True)
class HeadlineCount:
    outcome: str
    safer: int
    worse: int


@dataclass(frozen=True)
class Headline:
    word: str  # worse | safer | trade | no change
    counts: tuple[HeadlineCount, ...]


@dataclass(frozen=True)
class ErrorCount:
    kind: str
    count: int


@dataclass(frozen=True)
class CoverageRow:
    """Rows without an outcome in one condition, per run, and whether their share differs."""

    key: str
    label: str
    before_rows: int
    before_without: int
    after_rows: int
    after_without: int
    before_errors: tuple[ErrorCount, ...]
    after_errors: tuple[ErrorCount, ...]
    p: float | None
    q_value: float | None
    differs: bool


@dataclass(frozen=True)
class Comparison:
    """Two runs compared per condition and per failure outcome (or the chosen event)."""

    before: RunSide
    after: RunSide
    method: str  # mcnemar | fisher | logrank_bh
    method_is_default: bool
    paired: bool  # paired at sweep time (same salt)
    event: str | None
    q: float
    horizon: float
    t_unit: str
    outcomes: tuple[str, ...]  # the events tested, in declared order
    successes: tuple[str, ...]
    tests: int  # m, the number of tests BH adjusted over
    conditions: tuple[ConditionResult, ...]
    headline: Headline
    coverage: tuple[CoverageRow, ...]
    only_before: tuple[str, ...]  # labels of conditions present in one run only
    only_after: tuple[str, ...]
    warnings: tuple[str, ...]
    # McNemar against a run swept with --stop-when-settled: its looks, whose sequential
    # p-values replaced the fixed design's (comparison.sequential); None otherwise
    sequential: dict[str, Any] | None = None

    @property
    def method_phrase(self) -> str:
        if self.sequential is not None:
            return "group-sequential paired test on shared seeds"
        return METHOD_PHRASES[self.method]

    @property
    def any_worse(self) -> bool:
        """What `check` gates on: a failure outcome rose (or a success fell) anywhere."""
        return any(c.verdict in ("worse", "trade") for c in self.conditions)

    def log_entry(self, command: str) -> dict[str, Any]:
        """This comparison as one line of the comparisons log (store.compared.record)."""
        return {
            "command": command,
            "before": side_entry(self.before),
            "after": side_entry(self.after),
            "method": self.method,
            "event": self.event,
            "q": self.q,
            "headline": self.headline.word,
            "counts": {c.outcome: {"safer": c.safer, "worse": c.worse} for c in self.headline.counts},
        }

    def to_dict(self) -> dict[str, Any]:
        document = dataclasses.asdict(self)
        document["method_phrase"] = self.method_phrase
        document["any_worse"] = self.any_worse
        return document
