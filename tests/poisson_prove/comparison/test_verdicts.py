"""Per-outcome results to words, against every case of docs/comparing.md's rule: a failure
rising or a success falling is worse, the reverse safer, both a trade; the headline is the
same rule over every condition."""

from __future__ import annotations

import itertools

import pytest

from poisson_prove.comparison.result import OutcomeResult, Rate
from poisson_prove.comparison.verdicts import decide_verdicts

RATE = Rate(n=100, k=10, share=0.1, lo=0.05, hi=0.17, starred=False, variance=None, effective_n=None)
EVENTS = ("unresolved", "resolved")  # a failure, then a success
ADVERSE = (True, False)


def _row(outcome: str, verdict: str, note: str | None = None) -> OutcomeResult:
    return OutcomeResult(
        outcome, RATE, RATE, None, None, None, None, None, None, None, verdict, None, None, note
    )


def _expected(failure: str, success: str) -> str:
    """The rule written out independently: which moves are bad, which good."""
    bad = failure == "rose" or success == "fell"
    good = failure == "fell" or success == "rose"
    if bad and good:
        return "trade"
    if bad:
        return "worse"
    if good:
        return "safer"
    return "not tested" if failure == success == "not tested" else "no change"


MOVES = ("rose", "fell", "no change", "not tested")


@pytest.mark.parametrize(("failure", "success"), list(itertools.product(MOVES, MOVES)))
def test_each_pair_of_moves_gives_the_documented_word(failure: str, success: str) -> None:
    rows = [_row("unresolved", failure), _row("resolved", success)]
    decided = decide_verdicts({0: rows}, ["k"], ["x 1"], [True], EVENTS, ADVERSE)
    (condition,) = decided.conditions
    assert condition.verdict == _expected(failure, success)
    assert condition.rose == tuple(r.outcome for r in rows if r.verdict == "rose")
    assert condition.fell == tuple(r.outcome for r in rows if r.verdict == "fell")
    assert decided.headline.word == ("no change" if condition.verdict == "not tested" else condition.verdict)
    not_tested = ["condition x 1 has no episode with an outcome in one run; it is not tested"]
    assert list(decided.warnings) == (not_tested if condition.verdict == "not tested" else [])


def test_the_headline_counts_conditions_per_outcome_and_skips_those_not_in_both_runs() -> None:
    results = {
        0: [_row("unresolved", "rose"), _row("resolved", "no change")],
        1: [_row("unresolved", "fell", note="log-rank note"), _row("resolved", "rose")],
        2: [_row("unresolved", "rose"), _row("resolved", "rose")],  # ran in one run only
    }
    decided = decide_verdicts(results, ["a", "b", "c"], ["A", "B", "C"], [True, True, False], EVENTS, ADVERSE)
    assert [(c.key, c.verdict) for c in decided.conditions] == [("a", "worse"), ("b", "safer")]
    assert decided.headline.word == "trade"
    counts = {h.outcome: (h.safer, h.worse) for h in decided.headline.counts}
    assert counts == {"unresolved": (1, 1), "resolved": (1, 0)}
    assert list(decided.warnings) == ["condition B, unresolved: log-rank note"]
