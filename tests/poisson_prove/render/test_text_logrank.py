"""A log-rank row's result says which of its two tests made its verdict, when not both."""

from __future__ import annotations

import dataclasses

import pytest

from poisson_prove.comparison.result import OutcomeResult, Rate, RateTest
from poisson_prove.render.text import rate_q, result_text

RATE = Rate(n=200, k=40, share=0.2, lo=0.15, hi=0.26, starred=False, variance=None, effective_n=None)
ROW = OutcomeResult(
    "timeout", RATE, RATE, None, None, None, 0.37, 0.54, None, 0.89, "rose", None, None, None,
    logrank_verdict="no change",
    rate_test=RateTest("mcnemar", 200, 40, 90, 1.2e-5, 1.5e-5, 2.0e-10, "rose"),
)


@pytest.mark.parametrize(
    ("verdict", "hazard", "rate", "text"),
    [
        ("rose", "no change", "rose", "rose (McNemar)"),
        ("rose", "rose", "rose", "rose"),
        ("rose", "rose", "no change", "rose (log-rank)"),
        ("rose", "fell", "rose", "rose (McNemar; log-rank: fell)"),
        ("rose", "rose", "fell", "rose (log-rank; McNemar: fell)"),
        ("fell", "fell", "no change", "fell (log-rank)"),
    ],
)
def test_the_result_names_the_test_that_moved(verdict: str, hazard: str, rate: str, text: str) -> None:
    beside = dataclasses.replace(ROW.rate_test, verdict=rate)
    row = dataclasses.replace(ROW, verdict=verdict, logrank_verdict=hazard, rate_test=beside)
    assert result_text(row) == text
    assert rate_q(row) == "2.0e-10"


def test_other_methods_print_as_before() -> None:
    plain = dataclasses.replace(ROW, logrank_verdict=None, rate_test=None)
    assert result_text(plain) == "rose" and rate_q(plain) == "-"
    fisher = dataclasses.replace(ROW, rate_test=dataclasses.replace(ROW.rate_test, method="fisher"))
    assert result_text(fisher) == "rose (Fisher)"
