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
# The pooled rows' test of runs with a case axis (STATISTICS.md section 7; comparison.pooled)
POOLED_PHRASES = {
    "sign_flip": "paired sign-flip test over cases",
    "sign_flip_unpaired": "sign-flip test over cases of independent runs",
}
# What a comparison not run with --method logrank_bh leaves out of each row of its JSON
LOGRANK_ROW_FIELDS = ("logrank_verdict", "rate_test")
# What a comparison without a case axis leaves out of its JSON (its document stays as it was)
CASE_FIELDS = ("case_axis", "pooled_test", "cases", "case_tests")
CASE_CONDITION_FIELDS = ("family", "group", "case")
CASE_ROW_FIELDS = (
    "family", "d", "cases", "cases_up", "cases_down", "effective_pairs", "within_case_correlation",
)


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
    backend: str | None = None  # "import" for a run brought in by `poisson-prove import`


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
class RateTest:
    """Under `--method logrank_bh`: the rate test the runs get by default (McNemar on the
    twins when paired at sweep time, Fisher otherwise) on the same row, its own
    Benjamini-Hochberg family (the very q-values `diff` prints without --method)."""

    method: str  # mcnemar | fisher
    pairs: int | None  # McNemar: episodes joined on (condition, replicate, seed)
    b: int | None
    c: int | None
    p: float  # McNemar's mid-p, Fisher's two-sided exact p
    p_exact: float | None  # McNemar's exact (conditional binomial) p
    q_value: float
    verdict: str  # rose | fell | no change


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
    # Runs with a case axis only (STATISTICS.md section 7). The family the row's q belongs to:
    # "pooled" (a benchmark-level row, the headline family) or "case" (detail, its own family);
    # "condition" without a case axis.
    family: str = "condition"
    # case rows: d_k = c_k - b_k, the case's events after minus before among the pairs the
    # pooled test counts (for independent runs: among its first episodes of both runs)
    d: int | None = None
    # pooled rows: the cases counted, those whose d_k > 0 and < 0, the effective pairs
    # n_eff = (sum m_k) / (1 + (m_bar - 1) rho) and rho, the before run's within-case correlation
    cases: int | None = None
    cases_up: int | None = None
    cases_down: int | None = None
    effective_pairs: float | None = None
    within_case_correlation: float | None = None
    # `--method logrank_bh` only: the log-rank test's own verdict (`verdict` is then the
    # worse of it and the rate test's: a row rose when either test says it rose) and the rate
    # test beside it (RateTest)
    logrank_verdict: str | None = None
    rate_test: RateTest | None = None


@dataclass(frozen=True)
class ConditionResult:
    key: str
    label: str
    verdict: str  # worse | safer | trade | no change | not tested
    fell: tuple[str, ...]
    rose: tuple[str, ...]
    outcomes: tuple[OutcomeResult, ...]
    # Runs with a case axis only: "pooled" for a pooled group (its key is the condition key
    # without the case axis, "all" when that is the only axis), "case" for one case; a case's
    # pooled group (its label) and its case-axis value
    family: str = "condition"
    group: str | None = None
    case: str | None = None
    # Two or more declared failure outcomes compared (no --event): the union's row, "any
    # failure" (comparison.any_failure), tested as a family of its own; None otherwise
    any_failure: OutcomeResult | None = None

    @property
    def movement(self) -> int:
        """How far a case moved: the sum of |d_k| over its events (0 for a case that did not)."""
        return sum(abs(row.d or 0) for row in self.outcomes)


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
class SourceDifference:
    """One field of the imported runs' `source` (model, task args, scorer, ...) whose value
    differs between them."""

    key: str
    before: Any
    after: Any


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
    # McNemar (also the one beside log-rank) against a run swept with --stop-when-settled: its
    # looks, whose sequential p-values replaced the fixed design's (comparison.sequential); None
    # otherwise
    sequential: dict[str, Any] | None = None
    # Runs whose spec declares a case axis (STATISTICS.md section 7): `conditions` are then the
    # pooled groups (the headline family, `tests` its size) and `cases` every case's rows (the
    # detail family of `case_tests` tests); `pooled_test` is a key of POOLED_PHRASES.
    case_axis: str | None = None
    pooled_test: str | None = None
    cases: tuple[ConditionResult, ...] = ()
    case_tests: int = 0
    # Both runs carry a `source` (imports): the fields whose values differ; None otherwise
    source_differences: tuple[SourceDifference, ...] | None = None
    # The "any failure" rows' family size (their own Benjamini-Hochberg); 0 without those rows
    any_failure_tests: int = 0
    # `--method logrank_bh`: the rate test every row also carries (mcnemar | fisher, the runs'
    # default), which gates too; None for the other methods
    rate_method: str | None = None

    @property
    def method_phrase(self) -> str:
        if self.pooled_test is not None:
            return POOLED_PHRASES[self.pooled_test]
        if self.rate_method is not None:
            return f"{METHOD_PHRASES[self.method]} and {METHOD_NAMES[self.rate_method]} on the rates"
        if self.sequential is not None:
            return "group-sequential paired test on shared seeds"
        return METHOD_PHRASES[self.method]

    @property
    def any_worse(self) -> bool:
        """What `check` gates on: a failure outcome rose (or a success fell) anywhere (in a
        pooled group, for runs with a case axis)."""
        return any(c.verdict in ("worse", "trade") for c in self.conditions)

    def cases_by_movement(self) -> list[ConditionResult]:
        """The per-case rows, most-moved first (ties keep the runs' order): the one order the
        text, the JSON's readers and the dashboard show cases in."""
        return sorted(self.cases, key=lambda c: -c.movement)  # stable: ties keep their order

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
        if self.source_differences is None:
            del document["source_differences"]
        if self.rate_method is None:  # not log-rank: the document is as it always was
            del document["rate_method"]
            for condition in (*document["conditions"], *document["cases"]):
                union = condition.get("any_failure")
                for row in [*condition["outcomes"], *([union] if union else [])]:
                    for name in LOGRANK_ROW_FIELDS:
                        del row[name]
        for case in document["cases"]:  # per-case detail rows carry no union row
            del case["any_failure"]
        if not self.any_failure_tests:  # one failure outcome, or --event: as it always was
            del document["any_failure_tests"]
            for condition in document["conditions"]:
                del condition["any_failure"]
        if self.case_axis is None:  # without a case axis the document is as it always was
            for name in CASE_FIELDS:
                del document[name]
            for condition in document["conditions"]:
                for name in CASE_CONDITION_FIELDS:
                    del condition[name]
                union = condition.get("any_failure")
                rows = [*condition["outcomes"], *([union] if union else [])]
                for row in rows:
                    for name in CASE_ROW_FIELDS:
                        del row[name]
        return document
