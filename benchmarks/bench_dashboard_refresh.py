"""A dashboard refresh after one new run, against a pyarrow read of the same columns.

The store is written by `poisson-prove sweep` itself with its defaults (a fast three-outcome
rollout, 9 conditions), every run paired with the one before. The dashboard is drawn once (its
drawing cache filled). Then each round sweeps one more run (not timed) and times, side by side
in fresh processes, in alternating order:
- A: `poisson-prove dashboard` (the refresh: only the new run and its comparisons are drawn; the
  sweep's own refresh of the page is kept out by setting the page aside while it runs);
- B: a fresh interpreter that imports pyarrow and reads cell, outcome, t and horizon of every
  run, and nothing else;
then C: `poisson-prove dashboard` once more, with nothing new (every run and comparison from
the cache), against the same B.
Prints each round's ratios A/B and C/B, their min and median, and the 1-minute load average.

    .venv/bin/python benchmarks/bench_dashboard_refresh.py [--runs 100] [--replicates 1100] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROLLOUT = '''
import random
from poisson_prove import Episode

def rollout(cfg, seed):
    r = random.Random(seed)
    u = r.random()
    level = cfg["rate"]
    if u < level:
        return Episode(outcome="violated", t=r.randint(1, 20), horizon=20)
    if u < level + 0.08:
        return Episode(outcome="timeout", t=20, horizon=20)
    return Episode(outcome="done", t=r.randint(1, 20), horizon=20)
'''

SPEC = """target = "bench_agent:rollout"
target_id = "bench"
replicates = {replicates}

[axes.task]
type = "categorical"
values = ["refund", "lookup", "schedule"]

[axes.rate]
type = "continuous"
values = [0.1, 0.2, 0.3]

[declare]
outcomes = ["done", "violated", "timeout"]
failures = ["violated", "timeout"]
"""

BASELINE = """
import sys, glob
import pyarrow.parquet as pq
for run in sorted(glob.glob(sys.argv[1] + "/*/episodes")):
    pq.read_table(run, columns=["cell", "outcome", "t", "horizon"])
"""


def _run(args: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--replicates", type=int, default=1100, help="per condition (9 conditions)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    prove = str(Path(sys.executable).with_name("poisson-prove"))
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "bench_agent.py").write_text(ROLLOUT, encoding="utf-8")
        (work / "prove.toml").write_text(SPEC.format(replicates=args.replicates), encoding="utf-8")
        sweep = [prove, "--store", "S", "sweep", "prove.toml", "--yes", "--max-mde", "1"]
        started = time.perf_counter()
        _run(sweep, work)
        for _ in range(args.runs - 1):
            _run([*sweep, "--pair-with", "latest"], work)
        took = time.perf_counter() - started
        print(f"swept {args.runs} runs x {9 * args.replicates:,} episodes in {took:.0f} s")
        dashboard = [prove, "--store", "S", "dashboard", "--plain"]
        first = _run(dashboard, work)
        print(f"first draw (cache empty): {first:.2f} s")
        baseline = [sys.executable, "-c", BASELINE, str(work / "S")]
        ratios, unchanged = [], []
        for round_ in range(args.rounds):
            # one new run: what the refresh must draw. A sweep refreshes a store's existing page
            # itself, so the page is set aside while it runs: the timed refresh draws the new run.
            page = work / "S" / "dashboard.html"
            page.rename(page.with_suffix(".aside"))
            _run([*sweep, "--pair-with", "latest"], work)
            page.with_suffix(".aside").rename(page)
            if round_ % 2 == 0:
                refresh, read = _run(dashboard, work), _run(baseline, work)
            else:
                read, refresh = _run(baseline, work), _run(dashboard, work)
            again = _run(dashboard, work)  # nothing new: every run and comparison from the cache
            ratios.append(refresh / read)
            unchanged.append(again / read)
            print(f"round {round_ + 1}: refresh {refresh:.2f} s, pyarrow read {read:.2f} s, "
                  f"ratio {refresh / read:.2f}; nothing new {again:.2f} s, ratio {again / read:.2f}  "
                  f"(load {os.getloadavg()[0]:.1f})")
        for label, values in (("after one new run", ratios), ("with nothing new", unchanged)):
            print(f"refresh {label} / pyarrow read: min {min(values):.2f}, "
                  f"median {statistics.median(values):.2f} over {args.rounds} rounds "
                  f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
