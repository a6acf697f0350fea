"""`check` as a three-valued gate, through the installed console script."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.stats.power import replicates_needed
from tests.poisson_prove.runs import from_outcomes, write_run


def _outcomes(n: int, unresolved: int) -> list[str | None]:
    return ["unresolved"] * unresolved + ["resolved"] * (n - unresolved)


def _pair(workdir: Path, n: int, before: int, after: int) -> tuple:
    store = workdir / "prove-runs"
    a = write_run(store, from_outcomes({("refund", 0.0): _outcomes(n, before)}))
    b = write_run(store, from_outcomes({("refund", 0.0): _outcomes(n, after)}), paired_with=a)
    return a, b


def test_small_no_rise_is_inconclusive_with_exit_5_and_a_replicates_line(prove, workdir: Path) -> None:
    _pair(workdir, 12, 3, 3)
    result = prove("check")
    assert result.returncode == 5, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("no change")
    message = next(line for line in lines if line.startswith("inconclusive: "))
    assert "too few episodes to see a rise of 0.200" in message
    needed = replicates_needed(1, 2, q=0.05, max_mde=0.2)
    assert f"next: sweep both runs with --replicates {needed} to see a rise of 0.200" in lines
    # diff prints the same report without the gate's lines and exits 0
    plain = prove("diff")
    assert plain.returncode == 0 and "inconclusive" not in plain.stdout
    as_json = prove("check", "--json")
    document = json.loads(as_json.stdout)
    assert as_json.returncode == 5 and document["exit_code"] == 5
    assert document["gate"]["status"] == "inconclusive"
    assert document["gate"]["replicates_needed"] == needed
    assert {u["outcome"] for u in document["gate"]["underpowered"]} == {"unresolved", "timeout"}


def test_allow_inconclusive_keeps_exit_0(prove, workdir: Path) -> None:
    _pair(workdir, 12, 3, 3)
    result = prove("check", "--allow-inconclusive")
    assert result.returncode == 0, result.stderr
    assert "(allowed by --allow-inconclusive)" in result.stdout


def test_max_mde_decides_whether_a_large_design_settles(prove, workdir: Path) -> None:
    _pair(workdir, 300, 60, 60)
    assert prove("check").returncode == 0  # the plan's 0.200 is within reach of 300 pairs
    strict = prove("check", "--max-mde", "0.02")
    assert strict.returncode == 5
    assert "too few episodes to see a rise of 0.020" in strict.stdout


def test_a_rise_still_exits_4(prove, workdir: Path) -> None:
    _pair(workdir, 12, 0, 12)
    result = prove("check")
    assert result.returncode == 4 and "inconclusive" not in result.stdout


def test_bad_max_mde_is_a_usage_error(prove, workdir: Path) -> None:
    _pair(workdir, 12, 3, 3)
    result = prove("check", "--max-mde", "2")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "--max-mde must be between" in result.stderr
    assert result.stdout == ""
