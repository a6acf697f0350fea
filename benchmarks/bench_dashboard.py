"""`poisson-prove dashboard` on a store of 100 runs x 10,000 episodes, against reading them.

The runs (9 conditions, 3 outcomes, integer times, a few failed episodes with spans) are
written through the store's RunWriter, all paired. Then, side by side in the same run:
- `poisson-prove dashboard` in a child process (default --plots 10): wall time, peak memory
  (getrusage of the child) and the page's size;
- the baseline: reading the columns the rates need (cell, outcome, t, horizon) of every run
  with pyarrow.parquet in a child process, and nothing else.
Prints both and the ratio. Goal: the page in seconds, small (summaries, not rows).

    .venv/bin/python benchmarks/bench_dashboard.py [--runs 100] [--episodes 10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from poisson_prove.design.conditions import condition_key, condition_label
from poisson_prove.design.seeding import episode_seed, new_salt
from poisson_prove.store.runs import RunStore
from poisson_prove.store.table import episode_schema

OUTCOMES = ("done", "violated", "timeout")
CFGS = [{"task_id": task, "tool_fail_rate": rate} for task in ("refund", "lookup", "schedule")
        for rate in (0.05, 0.25, 0.55)]
BASELINE = """
import sys, glob
import pyarrow.parquet as pq
for run in sorted(glob.glob(sys.argv[1] + "/*/episodes")):
    pq.read_table(run, columns=["cell", "outcome", "t", "horizon"])
"""


def _write_run(store: RunStore, index: int, salt: str, episodes: int, paired_with: str | None) -> str:
    rng = np.random.default_rng(index)
    keys = [condition_key(cfg) for cfg in CFGS]
    replicates = episodes // len(keys)
    condition = np.repeat(np.arange(len(keys)), replicates)
    level = (condition % 3 + 1) / 10.0 * (1.1 if index % 2 else 1.0)
    u = rng.random(condition.size)
    outcome = np.where(u < level, 1, np.where(u < level + 0.08, 2, 0))
    t = np.where(outcome == 2, 20.0, rng.integers(1, 21, condition.size).astype(float))
    manifest = {
        "target": "bench:rollout", "target_id": "bench", "t_unit": "tool calls", "salt": salt,
        "paired_with": paired_with, "outcomes": list(OUTCOMES), "failures": ["violated", "timeout"],
        "successes": ["done"], "axis_order": ["task_id", "tool_fail_rate"],
        "cells": [{"key": k, "label": condition_label(c), "cfg": c} for k, c in zip(keys, CFGS, strict=True)],
        "design": {"mde": 0.08}, "replicates": replicates,
    }
    writer = store.create_run(target_id="bench", name=f"bench run {index:03d}", manifest=manifest)
    size = condition.size
    spans = [None] * size
    for row in np.flatnonzero(outcome == 1)[:20]:
        spans[row] = json.dumps([{"step": s, "tool": "search", "ok": s % 2 == 0} for s in range(5)])
    replicate = np.tile(np.arange(replicates), len(keys))
    columns = {
        "run_id": [writer.info.run_id] * size,
        "cell": [keys[c] for c in condition],
        "cfg": [json.dumps(CFGS[c], sort_keys=True) for c in condition],
        "replicate": pa.array(replicate, pa.int32()),
        "seed": [episode_seed(salt, keys[c], int(r)) for c, r in zip(condition, replicate, strict=True)],
        "outcome": [OUTCOMES[o] for o in outcome],
        "t": t, "horizon": np.full(size, 20.0),
        "case_id": [CFGS[c]["task_id"] for c in condition],
        "meta": pa.nulls(size, pa.string()), "error_kind": pa.nulls(size, pa.string()),
        "error_message": pa.nulls(size, pa.string()),
        "started_at": pa.nulls(size, pa.timestamp("us", tz="UTC")),
        "duration_s": pa.nulls(size, pa.float64()), "spans": pa.array(spans, pa.string()),
    }
    for field in episode_schema():  # a column the store holds and this writer does not fill: null
        columns.setdefault(field.name, pa.nulls(size, field.type))
    writer.write_batch(pa.table(columns))
    writer.update_manifest(status="complete", counts={"planned": size, "done": size, "errored": 0})
    writer.release()
    return writer.info.run_id


def _child(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak MB of one child process."""
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{done.stderr}")
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "prove-runs"
        store = RunStore(root)
        salt, previous = new_salt(), None
        started = time.perf_counter()
        for index in range(args.runs):
            previous = _write_run(store, index, salt, args.episodes, previous)
        print(f"wrote {args.runs} runs x {args.episodes:,} episodes in {time.perf_counter() - started:.1f} s")
        script = str(Path(sys.executable).with_name("poisson-prove"))
        base_s, _ = _child([sys.executable, "-c", BASELINE, str(root)], Path(folder))
        page_s, page_mb = _child([script, "--store", str(root), "dashboard"], Path(folder))
        size = (root / "dashboard.html").stat().st_size
        print(f"baseline: pyarrow reads cell, outcome, t, horizon of every run  {base_s:6.2f} s")
        print(f"poisson-prove dashboard                                         {page_s:6.2f} s"
              f"  peak {page_mb:,.0f} MB  page {size / 1e6:.2f} MB")
        print(f"ratio dashboard / baseline: {page_s / base_s:.1f}x")


if __name__ == "__main__":
    main()
