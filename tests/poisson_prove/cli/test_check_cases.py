"""`check` on runs with a case axis, through the installed console script: it gates on the
pooled rows only (exit 4 when a pooled failure rose, 5 when a pooled no-rise could not have
shown --max-mde), and names more cases, not more replicates, as the way out."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.stats.power import replicates_needed
from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark

R, U = "resolved", "unresolved"


def _pair(workdir: Path, before: list[list[str]], after: list[list[str]]) -> None:
    store = workdir / "prove-runs"
    a = write_benchmark(store, benchmark_episodes(before), name="a")
    write_benchmark(store, benchmark_episodes(after), name="b", paired_with=a)


def test_a_pooled_rise_exits_4_though_no_case_rose_alone(prove, workdir: Path) -> None:
    _pair(workdir, [[R, R, R]] * 40, [[U, U, R]] * 40)
    result = prove("check", "a", "b")
    assert result.returncode == 4, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("worse unresolved: 0 safer, 1 worse")
    assert "inconclusive" not in result.stdout
    document = json.loads(prove("check", "a", "b", "--json").stdout)
    assert document["exit_code"] == 4 and document["gate"]["status"] == "worse"
    assert all(case["verdict"] == "no change" for case in document["cases"])


def test_a_case_that_rose_alone_does_not_fail_the_gate(prove, workdir: Path) -> None:
    # one case of 30 repeats rose in all of them: its own row is worse, the benchmark is not
    _pair(workdir, [[R] * 30] + [[R, R, R]] * 39, [[U] * 30] + [[R, R, R]] * 39)
    result = prove("check", "a", "b", "--json")
    assert result.returncode in (0, 5), result.stdout
    document = json.loads(result.stdout)
    assert document["headline"]["word"] == "no change" and not document["any_worse"]
    assert document["cases"][0]["verdict"] == "worse"


def test_too_few_cases_is_inconclusive_and_names_the_cases_needed(prove, workdir: Path) -> None:
    # 12 cases x 5 repeats that always agree: the pooled rows are worth 12 pairs, not 60
    rows = [[U] * 5] * 3 + [[R] * 5] * 9
    _pair(workdir, rows, rows)
    result = prove("check", "a", "b")
    assert result.returncode == 5, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    message = next(line for line in lines if line.startswith("inconclusive: "))
    assert message.startswith(
        "inconclusive: too few cases to see a rise of 0.200 (2 pooled no-change row(s); all "
    )
    needed = replicates_needed(1, 2, q=0.05, max_mde=0.2)  # one pooled group, two failure outcomes
    assert lines[-1] == (
        f"next: run both runs on at least {needed} ticket cases per pooled group to see a rise of 0.200 "
        "(repeats of a case count as one case at worst)"
    )
    assert not any("--replicates" in line for line in lines)
    document = json.loads(prove("check", "a", "b", "--json").stdout)
    gate = document["gate"]
    assert (gate["status"], gate["cases_needed"], gate["replicates_needed"]) == ("inconclusive", needed, None)
    assert {u["condition"] for u in gate["underpowered"]} == {"all"}
    pooled = document["conditions"][0]["outcomes"][0]
    assert pooled["within_case_correlation"] == 1.0 and pooled["effective_pairs"] == 12.0
    assert prove("check", "a", "b", "--allow-inconclusive").returncode == 0


def test_enough_cases_pass_and_a_stricter_max_mde_does_not(prove, workdir: Path) -> None:
    rows = [[U, U]] * 120 + [[R, R]] * 280
    _pair(workdir, rows, rows)
    result = prove("check", "a", "b")
    assert result.returncode == 0, result.stdout
    assert "inconclusive" not in result.stdout
    strict = prove("check", "a", "b", "--max-mde", "0.02")
    assert strict.returncode == 5
    assert "too few cases to see a rise of 0.020" in strict.stdout
