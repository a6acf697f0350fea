"""The looks of `--stop-when-settled` are on their own clock: at the planned replicate counts,
whatever the batches. A fast rollout with the command's default batches gets its looks and
settles, and a slow one (batches written after a second's wait) and a concurrent one with tiny
batches stop at the same looks with the same p-values, for the same seeds."""

from __future__ import annotations

import json

from tests.poisson_prove.helpers import episodes, small_spec, write

# BAD_RATE sets the failure rate; WAIT makes each episode that slow (seconds).
TARGET = """
import os, random, time
from poisson_prove import Episode

RATE = float(os.environ.get("BAD_RATE", "0.3"))
WAIT = float(os.environ.get("WAIT", "0"))

def rollout(cfg, seed):
    if WAIT:
        time.sleep(WAIT)
    rng = random.Random(seed)
    return Episode("bad" if rng.random() < RATE else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""
REPLICATES = 200
SETTLED = ("--yes", "--max-mde", "0.9", "--pair-with", "before", "--stop-when-settled", "--json")


def _decisions(document: dict) -> dict:
    return {
        key: (entry["reason"], entry["stopped_at"], entry["looks"], entry.get("outcomes"))
        for key, entry in document["sequential"]["conditions"].items()
    }


def test_a_fast_rollout_gets_the_planned_looks_and_stops_where_a_slow_one_does(prove, workdir) -> None:
    write(workdir, "agent.py", TARGET)
    small_spec(workdir, replicates=REPLICATES)
    first = prove("sweep", "--yes", "--max-mde", "0.9", "--salt", "5eed5a17", "--name", "before")
    assert first.returncode == 0, first.stderr
    # The plan says when the looks are: replicate counts, not batches.
    planned = prove("sweep", "--dry-run", "--pair-with", "before", "--stop-when-settled")
    assert planned.returncode == 0, planned.stderr
    (line,) = [line for line in planned.stdout.splitlines() if line.startswith("stop when settled")]
    assert line.startswith(
        "stop when settled: looks at 20, 40, ..., 200 replicates of each condition, whatever the batches; "
        'a condition stops once every failure outcome against "before" is settled'
    ), line

    runs = {}
    for name, extra, env in (
        ("fast", (), {}),  # the command's defaults: batches of 25,000 rows or a second
        ("slow", (), {"WAIT": "0.004"}),  # ~1.6 s of episodes: batches cut by the second's wait
        ("concurrent", ("--concurrency", "4", "--batch-size", "7"), {}),
    ):
        swept = prove("sweep", *SETTLED, "--name", name, *extra, env={"BAD_RATE": "0.8", **env})
        assert swept.returncode == 0, (name, swept.stderr)
        runs[name] = json.loads(swept.stdout)

    fast = runs["fast"]
    assert fast["sequential"]["planned_looks"] == [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]
    assert fast["sequential"]["settled"] == 2 and fast["counts"]["saved"] > 0
    for entry in fast["sequential"]["conditions"].values():
        assert entry["reason"] == "settled" and entry["stopped_at"] < REPLICATES
        assert entry["looks"] == fast["sequential"]["planned_looks"][: entry["look"]]
        assert entry["looks"][-1] == entry["stopped_at"]
        assert entry["replicates_run"] == entry["stopped_at"]  # paused at the look: nothing past it
    for name in ("slow", "concurrent"):
        assert _decisions(runs[name]) == _decisions(fast), name
    # In order, one at a time, the rollouts spent are the same too, and so are the rows.
    assert runs["slow"]["counts"] == fast["counts"]
    stored = {}
    for name in ("fast", "slow"):
        rows = episodes(workdir / "prove-runs", runs[name]["run"]["id"])
        stored[name] = sorted((r["cell"], r["replicate"], r["seed"], r["outcome"]) for r in rows)
    assert stored["slow"] == stored["fast"]
    assert len(stored["fast"]) == fast["counts"]["done"]
