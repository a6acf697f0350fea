"""Under `--method logrank_bh` every row also carries the runs' default rate test (its own
Benjamini-Hochberg family), and a row's verdict is the worse of the two tests' verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.multitest import multipletests

import poisson_prove
from poisson_prove.comparison.stats import either_verdict
from tests.poisson_prove.runs import Episodes, write_run


@pytest.mark.parametrize(
    ("hazard", "rate", "adverse", "verdict"),
    [
        ("no change", "rose", True, "rose"),  # the rate rose: a failure's rise, whatever log-rank says
        ("fell", "rose", True, "rose"),  # the two disagree: the move for the worse wins
        ("rose", "fell", True, "rose"),
        ("fell", "no change", True, "fell"),
        ("no change", "fell", True, "fell"),
        ("no change", "no change", True, "no change"),
        ("rose", "fell", False, "fell"),  # a success (--event resolved): its fall is the bad move
        ("rose", "no change", False, "rose"),
    ],
)
def test_a_logrank_rows_verdict_is_the_worse_of_its_two_tests(
    hazard: str, rate: str, adverse: bool, verdict: str
) -> None:
    assert either_verdict(hazard, rate, adverse) == verdict


def _runs(store: Path) -> tuple[str, str]:
    """Two runs NOT paired (their own salts): unresolved early falls, timeouts at the horizon
    rise with the same hazard there."""
    runs = []
    for name, unresolved, timeout in (("a", 120, 40), ("b", 20, 90)):
        episodes = Episodes()
        for r in range(200):
            outcome, t = ("unresolved", 5.0) if r < unresolved else (
                ("timeout", 20.0) if r < unresolved + timeout else ("resolved", 20.0)
            )
            episodes.add({"ticket": "refund", "temperature": 0.0}, r, outcome, t, 20.0)
        runs.append(write_run(store, episodes, name=name).name)
    return runs[0], runs[1]


def test_unpaired_runs_get_fisher_beside_logrank_as_the_default_would(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    logrank = poisson_prove.compare(a, b, method="logrank_bh", store=tmp_path)
    default = poisson_prove.compare(a, b, store=tmp_path)
    assert (default.method, logrank.rate_method, logrank.paired) == ("fisher", "fisher", False)
    assert logrank.method_phrase == "cause-specific log-rank test and Fisher on the rates"
    (condition,) = logrank.conditions
    (reference,) = default.conditions
    assert condition.verdict == reference.verdict == "trade"
    rows = [*condition.outcomes, condition.any_failure]
    expected = [*reference.outcomes, reference.any_failure]
    for row, mine in zip(rows, expected, strict=True):
        rate = row.rate_test
        assert (rate.method, rate.pairs, rate.b, rate.c, rate.p_exact) == ("fisher", None, None, None, None)
        assert (rate.p, rate.q_value, rate.verdict) == (mine.p, mine.q_value, mine.verdict)
    for row in condition.outcomes:  # SciPy's Fisher on the counts, BH over the two outcomes
        assert row.rate_test.p == pytest.approx(
            fisher_exact([[row.before.k, 200 - row.before.k], [row.after.k, 200 - row.after.k]]).pvalue,
            abs=1e-12,
        )
    q = multipletests([row.rate_test.p for row in condition.outcomes], method="fdr_bh")[1]
    assert [row.rate_test.q_value for row in condition.outcomes] == pytest.approx(list(q), abs=1e-12)
    unresolved, timeout = condition.outcomes
    assert (timeout.verdict, timeout.logrank_verdict) == ("rose", "no change")
    assert timeout.rate_test.verdict == "rose"
    assert (unresolved.verdict, unresolved.logrank_verdict) == ("fell", "fell")
    assert condition.rose == ("timeout",) and logrank.any_worse
    # the default comparisons carry no log-rank fields
    assert all(r.rate_test is None and r.logrank_verdict is None for r in expected)
    assert "rate_method" not in default.to_dict() and logrank.to_dict()["rate_method"] == "fisher"
