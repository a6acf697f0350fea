"""`poisson-prove diff` on two runs of 1,000,000 episodes each, against statsmodels.

Two paired runs (9 conditions, 3 outcomes, integer times; the after run's horizon is 18 and
the before run's 20, so the before run is censored at the common horizon) are written through
the store's RunWriter. Then, side by side in the same run:
- `poisson-prove diff` in a child process: wall time and peak memory (getrusage of the child);
- the same cumulative incidences by statsmodels' CumIncidenceRight (2 runs x 9 conditions),
  in this process, checked equal to compare()'s to 1e-9.
Prints both and the ratio. Goal: diff under 5 s and 1 GB, at least 10x faster.

    .venv/bin/python benchmarks/bench_diff.py [--episodes 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from poisson_prove.conditions import cell_key
from poisson_prove.seeding import episode_seed, new_salt
from poisson_prove.store import RunStore

OUTCOMES = ("done", "violated", "timeout")
TASKS = ("refund", "lookup", "schedule")
RATES = (0.05, 0.25, 0.55)
BATCH = 250_000
USUAL_WAY = """
import sys, glob
import numpy as np, pandas as pd
from statsmodels.duration.survfunc import CumIncidenceRight
root, horizon = sys.argv[1], float(sys.argv[2])
codes = {"done": 1, "violated": 2, "timeout": 3}
for run in sorted(glob.glob(root + "/*/episodes")):
    files = sorted(glob.glob(run + "/*.parquet"))
    frame = pd.concat(pd.read_parquet(f, columns=["cell", "outcome", "t"]) for f in files)
    for cell, group in frame.groupby("cell"):
        status = np.where(group.t > horizon, 0, group.outcome.map(codes))
        CumIncidenceRight(np.minimum(group.t, horizon), status)
"""


def _episodes(rng: np.random.Generator, n_cells: int, replicates: int, horizon: int, shift: float):
    """Outcome codes and integer times: violated and timeout rates grow with the condition."""
    cell = np.repeat(np.arange(n_cells), replicates)
    level = (cell % 3 + 1) / 10.0
    u = rng.random(cell.size)
    outcome = np.where(u < level * shift, 1, np.where(u < level * shift + 0.08, 2, 0))
    t = rng.integers(1, 21, cell.size).astype(float)
    t = np.where(outcome == 2, 20.0, t)  # a timeout ends at the 20th call
    t = np.minimum(t, horizon) if horizon < 20 else t
    return cell, outcome, t


def _write(store: RunStore, name: str, salt: str, keys, cfgs, seeds, cell, outcome, t, horizon, paired_with):
    manifest = {
        "target": "bench:rollout",
        "target_id": "bench",
        "t_unit": "tool calls",
        "salt": salt,
        "paired_with": paired_with,
        "outcomes": list(OUTCOMES),
        "failures": ["timeout", "violated"],
        "successes": ["done"],
        "axis_order": ["task_id", "tool_fail_rate"],
        "cells": [{"key": k, "cfg": json.loads(c)} for k, c in zip(keys, cfgs, strict=True)],
    }
    writer = store.create_run(target_id="bench", name=name, manifest=manifest)
    names = np.array(OUTCOMES, dtype=object)
    size = cell.size
    replicate = np.tile(np.arange(size // len(keys)), len(keys)).astype(np.int32)
    for lo in range(0, size, BATCH):
        hi = min(lo + BATCH, size)
        part = cell[lo:hi]
        writer.write_batch(
            pa.table(
                {
                    "run_id": pa.array([writer.info.run_id] * (hi - lo)),
                    "cell": pa.DictionaryArray.from_arrays(pa.array(part, pa.int32()), pa.array(keys)).cast(
                        pa.string()
                    ),
                    "cfg": pa.DictionaryArray.from_arrays(pa.array(part, pa.int32()), pa.array(cfgs)).cast(
                        pa.string()
                    ),
                    "replicate": pa.array(replicate[lo:hi]),
                    "seed": pa.array(seeds[lo:hi]),
                    "outcome": pa.array(names[outcome[lo:hi]], pa.string()),
                    "t": pa.array(t[lo:hi]),
                    "horizon": pa.array(np.full(hi - lo, float(horizon))),
                    "case_id": pa.DictionaryArray.from_arrays(
                        pa.array(part // 3, pa.int32()), pa.array(list(TASKS))
                    ).cast(pa.string()),
                    "meta": pa.nulls(hi - lo, pa.string()),
                    "error_kind": pa.nulls(hi - lo, pa.string()),
                    "error_message": pa.nulls(hi - lo, pa.string()),
                    "started_at": pa.nulls(hi - lo, pa.timestamp("us", tz="UTC")),
                    "duration_s": pa.nulls(hi - lo, pa.float64()),
                    "spans": pa.nulls(hi - lo, pa.string()),
                }
            )
        )
    writer.update_manifest(status="complete", counts={"planned": size, "done": size, "errored": 0})
    return writer.info


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=1_000_000)
    args = parser.parse_args()
    n_cells = len(TASKS) * len(RATES)
    replicates = args.episodes // n_cells
    rng = np.random.default_rng(2026)
    cfg_list = [{"task_id": task, "tool_fail_rate": rate} for task in TASKS for rate in RATES]
    keys = [cell_key(cfg) for cfg in cfg_list]
    cfgs = [json.dumps(cfg, sort_keys=True) for cfg in cfg_list]
    salt = new_salt()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "runs"
        store = RunStore(root)
        started = time.perf_counter()
        seeds = np.array([episode_seed(salt, key, r) for key in keys for r in range(replicates)], np.int64)
        before_data = _episodes(rng, n_cells, replicates, 20, 1.0)
        after_data = _episodes(rng, n_cells, replicates, 18, 0.8)
        before = _write(store, "bench a", salt, keys, cfgs, seeds, *before_data, 20, None)
        _write(store, "bench b", salt, keys, cfgs, seeds, *after_data, 18, before.run_id)
        print(f"wrote 2 runs of {seeds.size:,} episodes in {time.perf_counter() - started:.1f} s")

        script = Path(sys.executable).with_name("poisson-prove")
        started = time.perf_counter()
        child = subprocess.run(
            [str(script), "--store", str(root), "diff", "--plain"],
            capture_output=True, text=True, env={**os.environ, "XDG_CACHE_HOME": folder},
        )
        diff_s = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if child.returncode != 0:
            print(child.stderr)
            return 1
        print(child.stdout.splitlines()[0])

        # The same job done the usual way, as a command of its own: pandas reads the store,
        # statsmodels computes each condition's incidences (no tests, no pairing).
        started = time.perf_counter()
        usual = subprocess.run([sys.executable, "-c", USUAL_WAY, str(root), str(18.0)], capture_output=True,
                               text=True)
        usual_s = time.perf_counter() - started
        if usual.returncode != 0:
            print(usual.stderr)
            return 1

        from statsmodels.duration.survfunc import CumIncidenceRight

        import poisson_prove

        comparison = poisson_prove.compare("bench a", "bench b", store=root)  # warms imports and MDEs
        started = time.perf_counter()
        comparison = poisson_prove.compare("bench a", "bench b", store=root)
        compare_s = time.perf_counter() - started
        horizon = comparison.horizon

        # The rates alone, as the library computes them for every condition of both runs at once.
        from poisson_prove.compare_stats import rates_by_horizon

        started = time.perf_counter()
        for cell, outcome, t in (before_data, after_data):
            rates_by_horizon(cell, outcome + 1, t, n_cells, len(OUTCOMES), horizon)
        rates_s = time.perf_counter() - started
        started = time.perf_counter()
        baseline = {}
        for side, (cell, outcome, t) in (("before", before_data), ("after", after_data)):
            for c in range(n_cells):
                rows = cell == c
                time_c = np.minimum(t[rows], horizon)
                status = np.where(t[rows] > horizon, 0, outcome[rows] + 1)
                fit = CumIncidenceRight(time_c, status)
                at = np.searchsorted(fit.times, horizon, side="right") - 1
                baseline[(side, c)] = {OUTCOMES[k]: float(fit.cinc[k][at]) for k in range(len(fit.cinc))}
        statsmodels_s = time.perf_counter() - started
        worst = 0.0
        for c, condition in enumerate(comparison.conditions):
            for row in condition.outcomes:
                for side in ("before", "after"):
                    expected = baseline[(side, keys.index(condition.key))].get(row.outcome, 0.0)
                    worst = max(worst, abs(getattr(row, side).share - expected))
            del c
        print(f"poisson-prove diff: {diff_s:.2f} s wall, peak memory {peak_mb:.0f} MB (child process, cold)")
        print(f"compare() in process, warm: {compare_s:.2f} s (read, pair, rates, tests, MDEs)")
        print(f"rates alone (Aalen-Johansen, every condition, both runs, in memory): {rates_s:.3f} s")
        print(f"statsmodels CumIncidenceRight, same incidences, in memory: {statsmodels_s:.3f} s")
        print(f"pandas + statsmodels as a command of its own (read, incidences only): {usual_s:.2f} s")
        print(f"largest difference between the two: {worst:.1e}")
        print(f"ratio statsmodels / diff (whole command): {statsmodels_s / diff_s:.2f}x")
        print(f"ratio statsmodels / rates alone (like for like): {statsmodels_s / rates_s:.1f}x")
        print(f"ratio pandas+statsmodels command / diff command: {usual_s / diff_s:.2f}x")
        ok = diff_s < 5 and peak_mb < 1024 and worst < 1e-9
        print("goal < 5 s, < 1 GB, equal to 1e-9:", "met" if ok else "NOT met")
        print("goal >= 10x statsmodels:", "met" if statsmodels_s / diff_s >= 10 else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
