"""`poisson-prove dashboard` on a benchmark: two paired runs of 500 cases x 3 replicates, against
reading the same columns with pyarrow alone.

The runs are written through the store's RunWriter with a stored spec whose `ticket` axis is the
case axis (`cases = true`); each case has its own failure probabilities (Beta-distributed), its
repeats share most of their draws, and the after run makes one case in 7 harder. Then, side by
side, best of 3 each:
- in child processes (what a user waits for, interpreter start included): `poisson-prove
  dashboard`, against a child that reads the columns the page's statistics read (cell,
  replicate, seed, outcome, t, horizon, case_id, error_kind) of both runs with pyarrow;
- in this process: `render_dashboard()` (its run cache cleared each time, as in a fresh
  process), against `pq.read_table` of the same columns.
Prints both, the ratio and the page's size. Goal: a page of a few tens of KB drawn in a few
seconds, whatever the number of cases. No assertion on time (a shared machine's timings vary).

    .venv/bin/python benchmarks/bench_dashboard_benchmark.py [--cases 500] [--replicates 3]
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
import pyarrow.parquet as pq

import poisson_prove.dashboard as dashboard
from poisson_prove.comparison.frame import COMPARE_COLUMNS
from poisson_prove.design.conditions import condition_key, condition_label
from poisson_prove.design.seeding import episode_seed, new_salt
from poisson_prove.store.runs import RunStore

OUTCOMES = ("resolved", "unresolved", "timeout")
FAILURES = ("unresolved", "timeout")
REPEATS = 3
BASELINE = """
import sys, glob
import pyarrow.parquet as pq
for run in sorted(glob.glob(sys.argv[1] + "/*/episodes")):
    pq.read_table(run, columns=sys.argv[2].split(","))
"""


def _codes(rng: np.random.Generator, cases: int, replicates: int, harder: float) -> np.ndarray:
    """Outcome codes per (case, replicate): 1 unresolved below the case's difficulty, 2 timeout
    in a thin band above it, else 0; one case in 7 is `harder` after."""
    difficulty = rng.beta(1.0, 3.0, cases)
    latent = rng.random((cases, replicates))
    shared = rng.random((cases, replicates)) < 0.7
    u = np.where(shared, latent[:, :1], latent)  # a hard case is hard every time, mostly
    p = np.minimum(1.0, difficulty + np.where(np.arange(cases) % 7 == 0, harder, 0.0))[:, None]
    return np.where(u < p, 1, np.where(u > 0.97, 2, 0))


def _write(store: RunStore, name: str, salt: str, codes: np.ndarray, paired_with: str | None) -> str:
    cases, replicates = codes.shape
    ids = [f"t{k:05d}" for k in range(cases)]
    cfgs = [{"ticket": case, "temperature": 0.0} for case in ids]
    keys = [condition_key(cfg) for cfg in cfgs]
    manifest = {
        "target": "bench:rollout", "target_id": "bench", "t_unit": "steps", "salt": salt,
        "paired_with": paired_with, "outcomes": list(OUTCOMES), "failures": list(FAILURES),
        "successes": ["resolved"], "axis_order": ["ticket", "temperature"],
        "spec": {"axes": {
            "ticket": {"type": "categorical", "values": ids, "cases": True},
            "temperature": {"type": "categorical", "values": [0.0]},
        }},
        "cells": [{"key": k, "label": condition_label(c), "cfg": c} for k, c in zip(keys, cfgs, strict=True)],
        "design": {"max_mde": 0.1}, "replicates": replicates,
    }
    writer = store.create_run(target_id="bench", name=name, manifest=manifest)
    condition = np.repeat(np.arange(cases), replicates)
    replicate = np.tile(np.arange(replicates), cases)
    size = condition.size
    rng = np.random.default_rng(len(name))
    code = codes.reshape(-1)
    writer.write_batch(pa.table({
        "run_id": [writer.info.run_id] * size,
        "cell": [keys[c] for c in condition],
        "cfg": [json.dumps(cfgs[c], sort_keys=True) for c in condition],
        "replicate": pa.array(replicate, pa.int32()),
        "seed": [episode_seed(salt, keys[c], int(r)) for c, r in zip(condition, replicate, strict=True)],
        "outcome": [OUTCOMES[o] for o in code],
        "t": np.where(code == 2, 20.0, rng.integers(1, 21, size).astype(float)),
        "horizon": np.full(size, 20.0),
        "case_id": [ids[c] for c in condition],
        "meta": pa.nulls(size, pa.string()), "error_kind": pa.nulls(size, pa.string()),
        "error_message": pa.nulls(size, pa.string()),
        "started_at": pa.nulls(size, pa.timestamp("us", tz="UTC")),
        "duration_s": pa.nulls(size, pa.float64()), "spans": pa.nulls(size, pa.string()),
    }))
    writer.update_manifest(status="complete", counts={"planned": size, "done": size, "errored": 0})
    writer.release()
    return writer.info.run_id


def _child(args: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{done.stderr}")
    return seconds


def _best(run, repeats: int) -> float:
    return min(run() for _ in range(repeats))


def _timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--replicates", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "prove-runs"
        store = RunStore(root)
        salt, rng = new_salt(), np.random.default_rng(7)
        state = rng.bit_generator.state
        before = _write(store, "before", salt, _codes(rng, args.cases, args.replicates, 0.0), None)
        rng.bit_generator.state = state  # the same cases and draws: twins differ only where it changed
        _write(store, "after", salt, _codes(rng, args.cases, args.replicates, 0.4), before)
        print(f"wrote 2 paired runs of {args.cases:,} cases x {args.replicates} replicates")
        columns = ",".join(COMPARE_COLUMNS)
        script = str(Path(sys.executable).with_name("poisson-prove"))
        baseline = [sys.executable, "-c", BASELINE, str(root), columns]
        base_s = _best(lambda: _child(baseline, Path(folder)), REPEATS)
        page_s = _best(lambda: _child([script, "--store", str(root), "dashboard"], Path(folder)), REPEATS)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size = (root / "dashboard.html").stat().st_size
        runs = sorted(root.glob("*/episodes"))

        def read() -> None:
            for run in runs:
                pq.read_table(run, columns=list(COMPARE_COLUMNS))

        def render() -> None:
            dashboard._RUN_CACHE.clear()  # as a fresh process: every run read and drawn
            dashboard.render_dashboard(root)

        render()  # matplotlib and jinja2 imported, as in a child that already started
        read_in = _best(lambda: _timed(read), REPEATS)
        render_in = _best(lambda: _timed(render), REPEATS)
        print(f"columns read: {columns}")
        print(f"child: pyarrow reads them of both runs    {base_s:6.2f} s")
        print(f"child: poisson-prove dashboard            {page_s:6.2f} s  peak {peak_mb:,.0f} MB"
              f"  page {size / 1e3:,.0f} KB")
        print(f"ratio dashboard / pyarrow (children): {page_s / base_s:.1f}x")
        print(f"in process: pq.read_table of them         {read_in:6.3f} s")
        print(f"in process: render_dashboard()            {render_in:6.3f} s")
        print(f"ratio render / read (in process): {render_in / read_in:.0f}x")


if __name__ == "__main__":
    main()
