"""A rate of 0 or 1 draws: `poisson-prove dashboard` exited 70 (`'xerr' must not contain negative
values`) whenever a condition never failed or always failed at an n where the Wilson bound came
out a hair inside the share (0/200 gave a low of 1.7e-18). The page now says 0 and 1 exactly,
as `diff --json` does, and the forest plot's bars are never negative."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from poisson_prove.comparison import compare
from poisson_prove.dashboard.plots import error_bar, forest_svg
from tests.poisson_prove.comparison.cases_kit import write_benchmark
from tests.poisson_prove.dashboard.pages import comparison_rows, number, read, tags
from tests.poisson_prove.dashboard.stores import pooled_groups
from tests.poisson_prove.runs import from_outcomes, write_run

# n where the Wilson bound of 0/n or n/n was not exactly 0 or 1 (the review's list starts so)
SIZES = (3, 6, 7, 12, 50, 200)


def _extremes() -> dict[tuple[str, float], list[str | None]]:
    """Per n: a condition that never fails and one that always ends unresolved."""
    per_condition: dict[tuple[str, float], list[str | None]] = {}
    for n in SIZES:
        per_condition[(f"never {n}", 0.0)] = ["resolved"] * n
        per_condition[(f"always {n}", 0.0)] = ["unresolved"] * n
    return per_condition


def _rates(document: dict) -> list[dict]:
    sides = ("before", "after")
    return [row[side] for c in document["conditions"] for row in c["outcomes"] for side in sides]


def test_rates_of_0_and_1_draw_and_the_page_says_0_and_1(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    before = write_run(store, from_outcomes(_extremes()), name="before")
    write_run(store, from_outcomes(_extremes()), name="after", paired_with=before)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    document = json.loads(prove("diff", "--json").stdout)
    rates = _rates(document)
    assert {r["share"] for r in rates} == {0.0, 1.0}
    assert all(r["lo"] == 0.0 for r in rates if r["share"] == 0.0)
    assert all(r["hi"] == 1.0 for r in rates if r["share"] == 1.0)
    html = read(store)
    rows = comparison_rows(html, 0)
    expected = [(c["key"], o) for c in document["conditions"] for o in c["outcomes"]]
    assert len(rows) == len(expected) == 2 * len(SIZES) * 2
    for attrs, (key, result) in zip(rows, expected, strict=True):
        assert attrs["data-condition"] == key
        for side in ("before", "after"):
            for field in ("share", "lo", "hi"):
                assert number(attrs[f"data-{side}-{field}"]) == result[side][field]
            if result[side]["share"] == 0.0:
                assert attrs[f"data-{side}-lo"] == "0.0"  # the text JSON writes, not 1.7e-18
            else:
                assert attrs[f"data-{side}-hi"] == "1.0"
    # the runs' own rate tables too, and the incidence bands inside [0, 1]
    cells = [a for t, a in tags(html) if t == "td" and "data-share" in a]
    assert cells and all(
        (a["data-lo"] == "0.0" if a["data-share"] == "0.0" else a["data-hi"] == "1.0") for a in cells
    )
    assert html.count("<svg") == 4  # the forest, the pair's before/after curves, both runs' panels
    # runs without a case axis: none of the benchmark's parts
    assert "data-family" not in html and "pooled" not in html


def _never_and_always():
    """Two pooled groups of 40 cases x 3 repeats: in one no case ever fails, in the other every
    case always ends unresolved."""
    return pooled_groups({0.0: [["resolved"] * 3] * 40, 0.7: [["unresolved"] * 3] * 40})


def test_a_benchmark_whose_cases_never_or_always_fail_draws(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    before = write_benchmark(store, _never_and_always(), name="before")
    write_benchmark(store, _never_and_always(), name="after", paired_with=before)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    document = json.loads(prove("diff", "--json").stdout)
    html = read(store)
    pooled = [a for t, a in tags(html) if t == "tr" and a.get("data-family") == "pooled"]
    expected = [o for c in document["conditions"] for o in c["outcomes"]]
    assert [o["before"]["share"] for o in expected] == [0.0, 0.0, 1.0, 0.0]
    assert len(pooled) == len(expected)
    for attrs, result in zip(pooled, expected, strict=True):
        for side in ("before", "after"):
            for field in ("share", "lo", "hi"):
                assert number(attrs[f"data-{side}-{field}"]) == result[side][field]
            end = "lo" if result[side]["share"] == 0.0 else "hi"
            assert attrs[f"data-{side}-{end}"] == ("0.0" if end == "lo" else "1.0")
    groups = [a for t, a in tags(html) if t == "td" and "data-share" in a]  # the runs' tables
    assert all((a["data-lo"] == "0.0" if a["data-share"] == "0.0" else a["data-hi"] == "1.0") for a in groups)


def test_the_forest_bars_are_never_negative(workdir: Path) -> None:
    assert error_bar(0.0, 1.7e-18, 0.02) == (0.0, 0.02)
    assert error_bar(1.0, 0.98, 1.0 - 1e-16) == pytest.approx((0.02, 0.0))
    assert error_bar(0.3, None, float("nan")) == (0.0, 0.0)
    store = workdir / "prove-runs"
    before = write_run(store, from_outcomes(_extremes()), name="before")
    after = write_run(store, from_outcomes(_extremes()), name="after", paired_with=before)
    comparison = compare(before.run_id, after.run_id, store=store)

    def hair(rate):  # a bound a rounding hair inside the share, as an estimator may leave it
        return dataclasses.replace(rate, lo=rate.share + 1e-17, hi=rate.share - 1e-17)

    conditions = tuple(
        dataclasses.replace(c, outcomes=tuple(
            dataclasses.replace(o, before=hair(o.before), after=hair(o.after)) for o in c.outcomes
        ))
        for c in comparison.conditions
    )
    svg = forest_svg(dataclasses.replace(comparison, conditions=conditions))
    assert svg.startswith("<svg") and svg.count("<path") > len(conditions)
