"""The example through the installed script: the docs' plan lines, the refusal, the JSON plan,
a stopped run resumed, its patched twin paired on the same seeds, and the trade it shows."""

from __future__ import annotations

import json
from pathlib import Path

from scipy.stats import binom

from poisson_prove.design.seeding import episode_seed
from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import episodes, manifests, tree

PLAN = "plan 1,746 rollouts of mock-agent: 9 cells x 194 replicates on local, $0 (local)"
TARGET = "target poisson_prove.examples.mock_agent:rollout (imports, takes cfg and seed)"
OUTCOMES = "outcomes failures: timeout, violated"
SMALLEST = (
    "smallest rise one condition alone would be flagged for 0.199 at its worst base rate, 0.400 "
    "(Fisher, q 0.05 over 18 tests, 4 times in 5; you accept up to 0.200)"
)
PATCHED = "poisson_prove.examples.mock_agent:rollout_patched"


def _init(prove, workdir: Path) -> None:
    result = prove("init", "--example")
    assert result.returncode == 0, result.stderr
    assert (workdir / "prove.toml").exists()


def test_dry_run_prints_the_docs_plan_and_writes_nothing(prove, workdir) -> None:
    _init(prove, workdir)
    before = tree(workdir)
    result = prove("sweep", "--dry-run")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [PLAN, TARGET, OUTCOMES]
    assert lines[-1] == SMALLEST
    assert result.stderr == ""
    assert tree(workdir) == before  # not even the store folder


def test_underpowered_design_is_refused_with_both_ways_out(prove, workdir) -> None:
    _init(prove, workdir)
    before = tree(workdir)
    result = prove("sweep", "--replicates", "20", "--dry-run")
    assert_clean_error(result, 1)
    assert result.stdout.splitlines()[0] == (
        "plan 180 rollouts of mock-agent: 9 cells x 20 replicates on local, $0 (local)"
    )
    assert "smallest rise" not in result.stdout
    assert result.stderr.splitlines() == [
        "error: underpowered design: one condition alone would be flagged for a change of 0.519 at its "
        "worst base rate, 0.000, and you accept 0.200",
        "next: poisson-prove sweep --replicates 193 --dry-run",
        "next: poisson-prove sweep --replicates 20 --dry-run --max-mde 0.625",
    ]
    assert tree(workdir) == before


def test_json_plan(prove, workdir) -> None:
    _init(prove, workdir)
    result = prove("sweep", "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "poisson-prove.sweep/1"
    assert document["verdict"] == "plan"
    assert document["sentence"] == PLAN.removeprefix("plan ")
    assert document["plan"] == {
        "rollouts": 1746,
        "cells": 9,
        "replicates": 194,
        "backend": "local",
        "concurrency": 1,
        "cost_usd": 0.0,
    }
    assert document["design_mde"] == {"mde": 0.1991, "base_rate": 0.4, "direction": "rise"}
    refused = prove("sweep", "--replicates", "20", "--dry-run", "--json")
    assert refused.returncode == 1
    document = json.loads(refused.stdout)
    assert document["verdict"] == "refused"
    assert document["error"]["next"][0] == "poisson-prove sweep --replicates 193 --dry-run --json"


def test_stopped_run_resumes_to_exactly_the_planned_set(prove, workdir) -> None:
    _init(prove, workdir)
    stopped = prove("sweep", "--yes", "--max-rollouts", "100", "--name", "stopped-early")
    assert stopped.returncode == 3, stopped.stderr
    out = stopped.stdout.splitlines()
    assert out[0] == PLAN
    assert any(
        line.startswith('stopped 100 of 1,746 rollouts kept in run "stopped-early" (partial) in ')
        for line in out
    ), out
    assert out[-1] == "next: poisson-prove sweep --resume"
    assert "\x1b" not in stopped.stdout + stopped.stderr  # a pipe never gets escape codes
    assert len(episodes(workdir / "prove-runs")) == 100

    resumed = prove("sweep", "--resume", "--yes")
    assert resumed.returncode == 0, resumed.stderr
    assert 'Resuming "stopped-early": 100 stored, 1,646 to run' in resumed.stdout.splitlines()
    assert any(
        line.startswith('done 1,746 rollouts in run "stopped-early" (complete) in ')
        for line in resumed.stdout.splitlines()
    )
    rows = episodes(workdir / "prove-runs")
    keys = [(r["cell"], r["replicate"]) for r in rows]
    assert len(keys) == len(set(keys)) == 1746
    (manifest,) = manifests(workdir / "prove-runs")
    assert manifest["status"] == "complete"
    assert manifest["counts"] == {"planned": 1746, "done": 1746, "errored": 0}
    assert len(manifest["resumed_at"]) == 1
    assert all(r["seed"] == episode_seed(manifest["salt"], r["cell"], r["replicate"]) for r in rows)
    nothing = prove("sweep", "--resume", "--yes")
    assert_clean_error(nothing, 1, "no partial run to resume")
    # --resume RUN finds the run by name, id or latest (and refuses it: it is complete).
    for ref in ("stopped-early", manifest["run_id"], "latest"):
        named = prove("sweep", "--resume", ref, "--yes")
        assert_clean_error(named, 1, 'run "stopped-early" is complete; there is nothing to resume')


def _mid_p(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0
    return min(1.0, 2 * (binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5) / 2))


def test_patched_twin_pairs_on_the_same_seeds_and_shows_a_trade(prove, workdir) -> None:
    _init(prove, workdir)
    # A pinned salt makes the McNemar counts reproducible (the trade shows for >99% of salts).
    first = prove("sweep", "prove.toml", "--yes", "--salt", "0123456789abcdef0123456789abcdef")
    assert first.returncode == 0, first.stderr
    second = prove("sweep", "prove.toml", "--yes", "--target", PATCHED, "--pair-with", "latest")
    assert second.returncode == 0, second.stderr
    before, after = manifests(workdir / "prove-runs")
    done = [line for line in second.stdout.splitlines() if line.startswith("done ")]
    assert done[0].startswith(f'done 1,746 rollouts in run "{after["name"]}" (complete) in ')
    assert done[0].endswith(f', paired with "{before["name"]}"')
    assert second.stdout.splitlines()[-1] == "next: poisson-prove diff"
    assert after["paired_with"] == before["run_id"] and after["salt"] == before["salt"]
    assert after["target"] == PATCHED

    rows = episodes(workdir / "prove-runs")
    by_run: dict[str, dict[tuple[str, int], dict]] = {}
    for row in rows:
        by_run.setdefault(row["run_id"], {})[(row["cell"], row["replicate"])] = row
    a, b = by_run[before["run_id"]], by_run[after["run_id"]]
    assert a.keys() == b.keys() and len(a) == 1746
    assert all(a[k]["seed"] == b[k]["seed"] for k in a)
    # The trade where tools fail most: McNemar on the shared seeds, b = event before only.
    cell = '{"task_id":"refund","tool_fail_rate":0.55}'
    pairs = [(a[k]["outcome"], b[k]["outcome"]) for k in a if k[0] == cell]
    p_values = {}
    for event in ("violated", "timeout"):
        fell = sum(1 for x, y in pairs if x == event and y != event)
        rose = sum(1 for x, y in pairs if x != event and y == event)
        p_values[event] = (fell, rose, _mid_p(fell, rose))
    assert p_values["violated"][0] > p_values["violated"][1] and p_values["violated"][2] < 0.05 / 18
    assert p_values["timeout"][1] > p_values["timeout"][0] and p_values["timeout"][2] < 0.05 / 18
