"""The pooled comparison of a benchmark: two paired runs of 500 cases x 5 replicates with 3
failure outcomes (and one success), against reading the same columns with pyarrow alone.

The runs are written through the store's RunWriter with a stored spec whose `ticket` axis is
the case axis (`cases = true`); each case has its own failure probabilities (Beta-distributed)
and its repeats share part of their draws. Then, side by side in this process, best of 5 each:
- reading the comparison's columns of both runs with pyarrow alone (`pq.read_table`);
- `poisson_prove.compare()` on the two runs (it reads the same columns, then computes the
  per-case rows, the pooled rows, their tests and verdicts);
and prints both, the comparison's compute beyond the read, and the ratio. Goal: the compute
beyond reading well under a second. No assertion on time (a shared machine's timings vary).

    .venv/bin/python benchmarks/bench_pooled_diff.py [--cases 500] [--replicates 5]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import poisson_prove
from poisson_prove.comparison.frame import COMPARE_COLUMNS
from poisson_prove.comparison.stats import condition_mde_values
from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import episode_seed, new_salt
from poisson_prove.stats.rejection import _cutoffs_cached
from poisson_prove.store.runs import RunStore

OUTCOMES = ("resolved", "unresolved", "timeout", "violated")
FAILURES = ("unresolved", "timeout", "violated")


def _outcomes(rng: np.random.Generator, rates: np.ndarray, latent: np.ndarray) -> np.ndarray:
    """Outcome codes per (case, replicate): a failure when the draw falls in its band; the
    repeats of a case share `latent` most of the time (a hard case is hard every time)."""
    shared = rng.random(latent.shape) < 0.7
    u = np.where(shared, latent, rng.random(latent.shape))
    bands = np.cumsum(rates, axis=1)  # (cases, failures)
    code = np.zeros(u.shape, dtype=np.int64)
    for j in range(len(FAILURES) - 1, -1, -1):
        code = np.where(u < bands[:, j : j + 1], j + 1, code)
    return code


def _write(store: RunStore, name: str, salt: str, cases: list[str], codes: np.ndarray, paired_with):
    replicates = codes.shape[1]
    cfgs = [{"ticket": case, "temperature": 0.0} for case in cases]
    keys = [condition_key(cfg) for cfg in cfgs]
    manifest = {
        "target": "bench:rollout",
        "target_id": "bench",
        "t_unit": "steps",
        "salt": salt,
        "paired_with": paired_with,
        "outcomes": list(OUTCOMES),
        "failures": list(FAILURES),
        "successes": ["resolved"],
        "axis_order": ["ticket", "temperature"],
        "spec": {
            "axes": {
                "ticket": {"type": "categorical", "values": cases, "cases": True},
                "temperature": {"type": "categorical", "values": [0.0]},
            }
        },
        "cells": [{"key": k, "cfg": c} for k, c in zip(keys, cfgs, strict=True)],
    }
    writer = store.create_run(target_id="bench", name=name, manifest=manifest)
    size = codes.size
    condition = np.repeat(np.arange(len(cases)), replicates)
    replicate = np.tile(np.arange(replicates), len(cases))
    names = np.array(OUTCOMES, dtype=object)
    rng = np.random.default_rng(len(name) + replicates)
    seeds = np.array([episode_seed(salt, keys[c], int(r)) for c, r in zip(condition, replicate, strict=True)])
    writer.write_batch(
        pa.table(
            {
                "run_id": pa.array([writer.info.run_id] * size),
                "cell": pa.array([keys[c] for c in condition]),
                "cfg": pa.array([json.dumps(cfgs[c], sort_keys=True) for c in condition]),
                "replicate": pa.array(replicate.astype(np.int32)),
                "seed": pa.array(seeds),
                "outcome": pa.array(names[codes.reshape(-1)], pa.string()),
                "t": pa.array(rng.integers(1, 21, size).astype(float)),
                "horizon": pa.array(np.full(size, 20.0)),
                "case_id": pa.array([cases[c] for c in condition]),
                "meta": pa.nulls(size, pa.string()),
                "error_kind": pa.nulls(size, pa.string()),
                "error_message": pa.nulls(size, pa.string()),
                "started_at": pa.nulls(size, pa.timestamp("us", tz="UTC")),
                "duration_s": pa.nulls(size, pa.float64()),
                "spans": pa.nulls(size, pa.string()),
            }
        )
    )
    writer.update_manifest(status="complete", counts={"planned": size, "done": size, "errored": 0})
    return writer.info


def _best_of(rounds: int, work):
    best, result = float("inf"), None
    for _ in range(rounds):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--replicates", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    cases = [f"t{k:05d}" for k in range(args.cases)]
    rates = rng.beta(0.6, 6.0, (args.cases, len(FAILURES)))
    latent = rng.random((args.cases, args.replicates))
    salt = new_salt()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "runs"
        store = RunStore(root)
        before = _write(store, "bench a", salt, cases, _outcomes(rng, rates, latent), None)
        after = _write(store, "bench b", salt, cases, _outcomes(rng, rates, latent), before.run_id)
        infos = [store.resolve(before.run_id), store.resolve(after.run_id)]

        def read_alone() -> int:
            return sum(
                pq.read_table(path, columns=list(COMPARE_COLUMNS)).num_rows
                for info in infos
                for path in info.batch_files()
            )

        def compare_cold():
            # as a fresh `diff` process: nothing remembered of the MDEs or rejection cut-offs
            condition_mde_values.cache_clear()
            _cutoffs_cached.cache_clear()
            return poisson_prove.compare(infos[0], infos[1], store=root)

        read, rows = _best_of(5, read_alone)
        poisson_prove.compare(infos[0], infos[1], store=root)  # imports once, as start-up does
        compared, comparison = _best_of(5, compare_cold)
    assert comparison is not None and comparison.case_axis == "ticket"
    print(
        f"{args.cases} cases x {args.replicates} replicates, {len(FAILURES)} failure outcomes, "
        f"2 runs ({rows:,} episodes): {len(comparison.conditions)} pooled group, "
        f"{comparison.tests} pooled tests, {comparison.case_tests} per-case tests"
    )
    print(f"pyarrow alone, reading the columns: {read * 1000:8.1f} ms")
    print(f"compare(), reading and computing:   {compared * 1000:8.1f} ms")
    print(f"compute beyond the read:            {(compared - read) * 1000:8.1f} ms")
    print(f"ratio compare() / pyarrow read:     {compared / read:8.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
