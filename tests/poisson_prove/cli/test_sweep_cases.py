"""A benchmark through the installed script: the plan of K cases x m replicates (both figures,
in text and --json), its refusal naming the cases that would pass, --budget sizing replicates
per case, and the case id every stored episode carries."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.design.pooled import pooled_design
from poisson_prove.stats.power import replicates_needed
from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import episodes, manifests, tree, write

SALT = "0123456789abcdef0123456789abcdef"
AGENT = """
import random
from poisson_prove import Episode

def rollout(cfg, seed):
    rng = random.Random(seed)
    if cfg["ticket"] == "t3" and cfg["model"] == "b":
        raise RuntimeError("tool down")
    meta = {"case_id": "mine"} if cfg["ticket"] == "t2" else {}
    return Episode("bad" if rng.random() < 0.3 else "ok", 1, 5, meta)
"""
SPEC = """
target = "agent:rollout"
target_id = "bench"
replicates = 4

[axes.ticket]
type = "categorical"
cases = true
values_from = "tickets.txt"

[axes.model]
type = "categorical"
values = ["a", "b"]

[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]

[local]
cost_per_episode = 0.01
"""
TICKETS = [f"t{i}" for i in range(1, 11)]
HEAD = [
    "plan 80 rollouts of bench: 20 cells (10 cases x 2 groups) x 4 replicates on local, "
    "$0.80 (local $0 + cost_per_episode $0.01 x 80)",
    "target agent:rollout (imports, takes cfg and seed)",
    "outcomes failures: bad",
    "axes ticket 10 cases from tickets.txt · model a, b",
    "seeds salt 01234567, given with --salt",
    "store prove-runs",
    "if independent one pooled group alone would be flagged for 0.350 at its worst base rate, 0.300, when a "
    "case's repeats are independent (within-case correlation 0, n = 40 = 10 cases x 4 replicates); more "
    "replicates move only this figure",
]


def _benchmark(workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    write(workdir, "tickets.txt", "t1\nt2\n# retired: t0\n\n" + "\n".join(TICKETS[2:]) + "\n")
    write(workdir, "prove.toml", SPEC)


def _figures(max_mde: float):
    cfgs = [{"ticket": t, "model": m} for t in TICKETS for m in ("a", "b")]
    return pooled_design(cfgs, "ticket", 4, 1, q=0.05, max_mde=max_mde)


def test_the_plan_prints_both_figures_and_checks_correlation_1(prove, workdir) -> None:
    _benchmark(workdir)
    before = tree(workdir)
    result = prove("sweep", "--dry-run", "--max-mde", "0.9", "--salt", SALT)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        *HEAD,
        "smallest rise one pooled group alone would be flagged for 0.683 at its worst base rate, 0.200, "
        "when a case's repeats always agree (within-case correlation 1, n = 10 cases; Fisher, q 0.05 over "
        "2 tests, 4 times in 5; you accept up to 0.900)",
    ]
    figures = _figures(0.9)  # the printed numbers are section 1's at n = K m and n = K, m = 2 tests
    assert (round(figures.independent.mde, 3), figures.independent.base_rate) == (0.350, 0.3)
    assert (round(figures.agreeing.mde, 3), figures.agreeing.base_rate) == (0.683, 0.2)
    assert tree(workdir) == before

    document = json.loads(prove("sweep", "--dry-run", "--json", "--max-mde", "0.9", "--salt", SALT).stdout)
    assert document["verdict"] == "plan"
    assert document["sentence"] == HEAD[0].removeprefix("plan ")
    assert document["design_mde"] == {"mde": figures.agreeing.mde, "base_rate": 0.2, "direction": "rise"}
    benchmark = document["benchmark"]
    assert benchmark["checked_at_correlation"] == 1 and benchmark["tests"] == 2
    assert (benchmark["cases"], benchmark["pooled_groups"], benchmark["replicates_per_case"]) == (10, 2, 4)
    assert (
        benchmark["correlation_0"]["n"] == 40 and benchmark["correlation_0"]["mde"] == figures.independent.mde
    )
    assert benchmark["correlation_1"]["n"] == 10 and benchmark["correlation_1"]["mde"] == figures.agreeing.mde
    assert document["axes"][0] == {
        "name": "ticket",
        "type": "categorical",
        "values": TICKETS,
        "cases": True,
        "values_from": "tickets.txt",
    }


def test_an_underpowered_benchmark_names_the_cases_that_would_pass(prove, workdir) -> None:
    _benchmark(workdir)
    result = prove("sweep", "--dry-run", "--salt", SALT)
    assert_clean_error(result, 1)
    assert result.stdout.splitlines() == HEAD  # no smallest rise line: the refusal says it
    needed = replicates_needed(2, 1)  # cases, at n = K: more replicates would not help
    assert result.stderr.splitlines() == [
        "error: underpowered benchmark: with 10 cases, one pooled group alone would be flagged for a change "
        "of 0.673 at its worst base rate, 0.000, when a case's repeats always agree (within-case correlation "
        "1), and you accept 0.200",
        f"next: use {needed} cases or more in axes.ticket (it has 10); more replicates move only the "
        "correlation-0 figure (0.350 now), never this one",
        f"next: poisson-prove sweep --dry-run --salt {SALT} --max-mde 0.683",
    ]
    assert needed == 126
    more = prove("sweep", "--dry-run", "--salt", SALT, "--replicates", "400")
    assert more.returncode == 1 and "with 10 cases" in more.stderr  # 400 repeats: still refused
    document = json.loads(prove("sweep", "--dry-run", "--json", "--salt", SALT).stdout)
    assert document["verdict"] == "refused"
    assert document["error"]["next"][0].startswith(f"use {needed} cases or more in axes.ticket")


def test_a_budget_buys_replicates_per_case(prove, workdir) -> None:
    _benchmark(workdir)
    result = prove("sweep", "--dry-run", "--max-mde", "0.9", "--budget", "0.5", "--salt", SALT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "plan 40 rollouts of bench: 20 cells (10 cases x 2 groups) x 2 replicates on local, "
        "$0.40 (local $0 + cost_per_episode $0.01 x 40)"
    )
    assert lines[-1] == (
        "with $0.50 you can run each of the 10 cases 2 times and detect a rise of 0.500 if a case's repeats "
        "are independent, a rise of 0.683 if they always agree (more money buys repeats, which move only "
        "the first)"
    )
    document = json.loads(prove("sweep", "--dry-run", "--json", "--max-mde", "0.9", "--budget", "0.5").stdout)
    assert document["budget"]["replicates"] == 2 and document["budget"]["cases"] == 10
    assert document["benchmark"]["replicates_per_case"] == 2
    before = tree(workdir)
    refused = prove("sweep", "--yes", "--max-mde", "0.9", "--budget", "0.1")
    assert refused.stdout == ""
    assert_clean_error(refused, 1)
    assert refused.stderr.splitlines() == [
        "error: with $0.10 you can run 5 of the 10 cases once, not every case; nothing was run",
        "next: --budget 0.20 runs each of the 10 cases once",
        "next: use at most 5 cases in axes.ticket",
    ]
    assert tree(workdir) == before


def test_every_episode_stores_its_case_id(prove, workdir) -> None:
    _benchmark(workdir)
    result = prove("sweep", "--yes", "--max-mde", "0.9", "--salt", SALT, "--max-rollouts", "50")
    assert result.returncode == 3, result.stderr  # stopped early, on purpose: resumed below
    (workdir / "tickets.txt").unlink()  # a resume plans from the manifest's ids, not the file
    resumed = prove("sweep", "--resume", "--yes", "--target", "agent:rollout")
    assert resumed.returncode == 0, resumed.stderr
    rows = episodes(workdir / "prove-runs")
    assert len(rows) == 80
    for row in rows:
        cfg = json.loads(row["cfg"])
        # The condition's case value, unless the rollout gave its own (kept, as before).
        assert row["case_id"] == ("mine" if cfg["ticket"] == "t2" else cfg["ticket"]), row
    errored = [row for row in rows if row["outcome"] is None]
    assert len(errored) == 4 and {row["case_id"] for row in errored} == {"t3"}
    (manifest,) = manifests(workdir / "prove-runs")
    table = manifest["spec"]["axes"]["ticket"]
    assert table == {"type": "categorical", "cases": True, "values_from": "tickets.txt", "values": TICKETS}
    assert manifest["design"]["benchmark"]["cases"] == 10


def test_without_a_case_axis_the_rollouts_case_id_is_stored_as_before(prove, workdir) -> None:
    write(
        workdir,
        "agent.py",
        "from poisson_prove import Episode\ndef rollout(cfg, seed):\n"
        "    return Episode('ok', 1, 5, {'case_id': 3} if cfg['x'] == 'a' else {})\n",
    )
    write(
        workdir,
        "prove.toml",
        SPEC.replace("cases = true\n", "")
        .replace('values_from = "tickets.txt"', 'values = ["a", "b"]')
        .replace("ticket", "x"),
    )
    result = prove("sweep", "--yes", "--max-mde", "1", "--replicates", "20")
    assert result.returncode == 0, result.stderr
    assert "smallest rise one condition alone" in result.stdout
    stored = {(json.loads(r["cfg"])["x"], r["case_id"]) for r in episodes(workdir / "prove-runs")}
    assert stored == {("a", "3"), ("b", None)}
