"""comparison/gate.py on runs with a case axis: the gate reads the pooled rows only, and an
inconclusive one names the cases per pooled group that would settle it (section 1's size at
n = the cases: repeats that always agree are worth one case), not replicates."""

from __future__ import annotations

from pathlib import Path

import poisson_prove
from poisson_prove.comparison.gate import gate
from poisson_prove.stats.power import replicates_needed
from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark
from tests.poisson_prove.runs import from_outcomes, write_run

R, U = "resolved", "unresolved"


def _benchmark(store: Path, before: list[list[str]], after: list[list[str]], **options) -> None:
    a = write_benchmark(store, benchmark_episodes(before, **options), name="a")
    write_benchmark(store, benchmark_episodes(after, **options), name="b", paired_with=a)


def test_an_underpowered_benchmark_names_the_cases_that_would_settle_it(tmp_path: Path) -> None:
    rows = [[U] * 5] * 3 + [[R] * 5] * 9
    _benchmark(tmp_path, rows, rows, others={"temperature": 0.0})
    result = gate(poisson_prove.compare("a", "b", store=tmp_path), 0.2)
    needed = replicates_needed(1, 2, q=0.05, max_mde=0.2)
    assert (result.status, result.exit_code, result.case_axis) == ("inconclusive", 5, "ticket")
    assert (result.cases_needed, result.replicates_needed) == (needed, None)
    assert {(u.condition, u.outcome) for u in result.underpowered} == {
        ("temperature 0.0", "unresolved"), ("temperature 0.0", "timeout"),
    }
    assert result.message() is not None and result.message().startswith("inconclusive: too few cases")
    assert result.next_line() == (
        f"next: run both runs on at least {needed} ticket cases per pooled group to see a rise of 0.200 "
        "(repeats of a case count as one case at worst)"
    )
    assert result.to_dict()["cases_needed"] == needed


def test_the_gate_reads_the_pooled_rows_not_the_cases(tmp_path: Path) -> None:
    _benchmark(tmp_path, [[R, R, R]] * 40, [[U, U, R]] * 40)
    comparison = poisson_prove.compare("a", "b", store=tmp_path)
    assert all(case.verdict == "no change" for case in comparison.cases)
    worse = gate(comparison, 0.2)
    assert (worse.status, worse.exit_code, worse.next_line()) == ("worse", 4, None)


def test_without_a_case_axis_the_gate_and_its_document_are_as_before(tmp_path: Path) -> None:
    a = write_run(tmp_path, from_outcomes({("refund", 0.0): [U] * 3 + [R] * 9}))
    write_run(tmp_path, from_outcomes({("refund", 0.0): [U] * 3 + [R] * 9}), paired_with=a)
    result = gate(poisson_prove.compare(a.run_id, "latest", store=tmp_path), 0.2)
    needed = replicates_needed(1, 2, q=0.05, max_mde=0.2)
    assert (result.status, result.replicates_needed, result.cases_needed) == ("inconclusive", needed, None)
    assert result.message().startswith("inconclusive: too few episodes to see a rise of 0.200 (2 no-change")
    assert result.next_line() == f"next: sweep both runs with --replicates {needed} to see a rise of 0.200"
    assert "cases_needed" not in result.to_dict()
