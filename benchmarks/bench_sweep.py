"""Sweep overhead: 100,000 trivial episodes through `poisson_prove.run_sweep` (in-process,
batches of 25,000 rows) and through the installed `poisson-prove sweep` with its default
options, against a bare Python loop calling the same rollout and keeping the Episodes, measured
side by side in this run. Prints the rates and their ratios.

The command line's figure is the sweep's own `seconds` from its `--json` document: the
episodes, their batches and the manifest, not the interpreter's start-up or the plan.

The sweep's figure includes everything a run does per episode: the seed (a keyed BLAKE2b
hash), the call, timing, validation, the row, Arrow conversion, Parquet batches written with
fsync, the manifest and events. Imports and the design's power computation are warmed up by a
small sweep first, so the figure is the per-episode cost, not Python's start-up.

    .venv/bin/python benchmarks/bench_sweep.py [--episodes 100000] [--batch-size 10000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROLLOUT = """
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("ok" if seed % 10 else "bad", 1, 5, {"case_id": cfg["x"]})
"""

# One condition axis of CONDITIONS values, two outcomes (inline tables: one line per key).
SPEC = """
target = "trivial:rollout"
target_id = "trivial"
replicates = {replicates}
axes = {{ x = {{ type = "categorical", values = {values} }} }}
declare = {{ outcomes = ["ok", "bad"], failures = ["bad"] }}
"""

CONDITIONS = 10


def bare_loop(rollout, conditions: list[dict], replicates: int) -> float:
    kept = []
    started = time.perf_counter()
    for replicate in range(replicates):
        for cfg in conditions:
            kept.append(rollout(dict(cfg), replicate))
    elapsed = time.perf_counter() - started
    assert len(kept) == replicates * len(conditions)
    return elapsed


def cli_seconds(folder: Path, store: Path, episodes: int) -> float:
    """`poisson-prove sweep --yes --json` with every other option at its default."""
    script = Path(sys.executable).with_name("poisson-prove")
    result = subprocess.run(
        [str(script), "--store", str(store), "sweep", "--yes", "--max-mde", "1", "--json"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    document = json.loads(result.stdout)
    assert document["counts"]["done"] == episodes, document["counts"]
    return float(document["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=25_000)
    parser.add_argument("--rounds", type=int, default=3, help="best of this many of each")
    args = parser.parse_args()
    replicates = args.episodes // CONDITIONS

    import poisson_prove

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "trivial.py").write_text(textwrap.dedent(ROLLOUT))
        values = [f"c{i}" for i in range(CONDITIONS)]
        (folder / "prove.toml").write_text(
            SPEC.format(replicates=replicates, values=values).replace("'", '"')
        )
        sys.path.insert(0, str(folder))
        from trivial import rollout  # the very function the sweep imports

        conditions = [{"x": v} for v in values]
        # Warm-up: imports, the power computation, Arrow and Parquet code paths.
        poisson_prove.run_sweep(folder / "prove.toml", store=folder / "warm", max_rollouts=2_000)
        bare, swept, cli = [], [], []
        for round_ in range(args.rounds):
            bare.append(bare_loop(rollout, conditions, replicates))
            started = time.perf_counter()
            result = poisson_prove.run_sweep(
                folder / "prove.toml", store=folder / f"runs{round_}", batch_size=args.batch_size
            )
            swept.append(time.perf_counter() - started)
            assert result.done == args.episodes and result.status == "complete"
            cli.append(cli_seconds(folder, folder / f"cli{round_}", args.episodes))
    n = args.episodes
    bare_rate, sweep_rate = n / min(bare), n / min(swept)
    overhead_us = (min(swept) - min(bare)) / n * 1e6
    shape = f"{CONDITIONS} conditions x {replicates:,} replicates, batches of {args.batch_size:,}"
    print(f"episodes            {n:,} ({shape})")
    print(f"bare loop           {bare_rate:,.0f} episodes/s")
    print(f"run_sweep           {sweep_rate:,.0f} episodes/s")
    print(f"overhead            {overhead_us:.2f} us per episode")
    cli_rate = n / min(cli)
    print(f"poisson-prove sweep {cli_rate:,.0f} episodes/s (default options, its own seconds)")
    print(f"ratio sweep/bare    {sweep_rate / bare_rate:.3f} (goal: at least 0.333)")
    print(f"ratio cli/bare      {cli_rate / bare_rate:.3f} (goal: at least 0.333)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
