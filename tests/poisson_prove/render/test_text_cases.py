"""render/text.py for runs with a case axis: which per-case rows are drawn (the cases that moved,
most first, at most CASES_SHOWN unless every case is asked for), the coverage of such runs, and
the line naming what differs between two imports' sources. Comparisons are real: compare() on
runs written into a store with a stored spec declaring the case axis."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import poisson_prove
from poisson_prove.comparison.result import Comparison, SourceDifference
from poisson_prove.render.text import CASES_SHOWN, case_table, plain_report, shown_cases, source_line
from prove_common.tables import plain_lines
from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark

R, U = "resolved", "unresolved"


def _comparison(store: Path, before: list[list[str | None]], after: list[list[str | None]]) -> Comparison:
    a = write_benchmark(store, benchmark_episodes(before), name="a")
    write_benchmark(store, benchmark_episodes(after), name="b", paired_with=a)
    return poisson_prove.compare("a", "b", store=store)


def test_the_cases_that_moved_most_come_first_and_the_rest_are_counted(tmp_path: Path) -> None:
    # case k's after run has moved[k] more unresolved than before (0: unmoved)
    moved = [0, 2, 0, 3, 1, 1, 2, 1, 1, 1, 1, 1, 1, 0]
    before = [[R, R, R]] * len(moved)
    after = [[U] * m + [R] * (3 - m) for m in moved]
    comparison = _comparison(tmp_path, before, after)
    assert [sum(abs(r.d or 0) for r in c.outcomes) for c in comparison.cases] == moved
    shown, more = shown_cases(comparison)
    assert [c.case for c in shown] == ["c0003", "c0001", "c0006", "c0004", "c0005", "c0007", "c0008",
                                       "c0009", "c0010", "c0011"]
    assert len(shown) == CASES_SHOWN and more == 1
    table = case_table(comparison)
    assert table.caption == "… and 1 more cases that moved (--cases all shows every case)"
    assert len(table.rows) == CASES_SHOWN  # each shown case moved in one event only: one row each
    every, none_left = shown_cases(comparison, "all")
    assert len(every) == len(moved) and none_left == 0
    assert [c.case for c in every][-3:] == ["c0000", "c0002", "c0013"]  # unmoved last, in order
    assert len(case_table(comparison, "all").rows) == 2 * len(moved)  # every event of every case


def test_no_case_moved_says_so(tmp_path: Path) -> None:
    rows = [[U, R, R]] * 5
    comparison = _comparison(tmp_path, rows, rows)
    table = case_table(comparison)
    assert table.rows == () and table.caption == "no case moved (5 cases; --cases all shows every case)"


def test_coverage_lists_only_the_cases_with_episodes_without_an_outcome(tmp_path: Path) -> None:
    before = [[R, R, R]] * 14
    after = [[None, R, R]] * 12 + [[R, R, R]] * 2
    comparison = _comparison(tmp_path, before, after)
    lines = plain_report(comparison).splitlines()
    start = lines.index("coverage: episodes without an outcome (left out of every rate)")
    listed = [line for line in lines[start + 2 :] if line.startswith("ticket ")]
    assert len(listed) == CASES_SHOWN
    assert "… and 2 more cases (--cases all shows every case)" in lines
    every = plain_report(comparison, cases="all").splitlines()
    start = every.index("coverage: episodes without an outcome (left out of every rate)")
    assert len([line for line in every[start + 2 :] if line.startswith("ticket ")]) == 12
    assert "\x1b" not in plain_report(comparison)


def test_the_source_line_names_the_fields_and_shows_short_values(tmp_path: Path) -> None:
    comparison = _comparison(tmp_path, [[R, R]] * 3, [[R, R]] * 3)
    assert comparison.source_differences is None and source_line(comparison) is None
    differences = (
        SourceDifference("model", "openai/gpt-4o", "openai/gpt-4o-mini"),
        SourceDifference("task_args", {"shots": 5}, {"shots": 0}),
        SourceDifference("scorer", "x" * 41, "match"),
        SourceDifference("epochs", None, 3),
    )
    changed = dataclasses.replace(comparison, source_differences=differences)
    assert source_line(changed) == (
        "source differs: model (openai/gpt-4o -> openai/gpt-4o-mini), task_args, scorer, epochs (- -> 3)"
    )
    assert plain_report(changed).splitlines()[4] == source_line(changed)
    assert source_line(dataclasses.replace(comparison, source_differences=())) is None
    assert plain_lines(case_table(changed))[0].startswith("per case (detail")
