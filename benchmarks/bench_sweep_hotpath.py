"""The sweep's hot path at scale: `poisson-prove sweep` with its default options (batches of
25,000 rows or a second, the supervised worker, fsync) on N trivial episodes, against a bare
loop calling the same rollout in a fresh interpreter that imports only what the rollout needs
and keeps the Episodes, side by side: A, B, A, B ... for `--rounds` rounds.

The sweep's figure is its own `seconds` from the `--json` document (the episodes, their seeds,
rows, batches and manifest; not the interpreter's start-up or the plan); the bare loop's is its
own loop time. Printed per round: both rates, their ratio, the sweep command's peak RSS (the
command and its worker, from the children's rusage) and the 1-minute load average; then the
min and median ratio. Goal (issue 26): ratio >= 0.5 at 1,000,000 episodes, memory flat.

    .venv/bin/python benchmarks/bench_sweep_hotpath.py [--episodes 1000000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROLLOUT = """
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("ok" if seed % 10 else "bad", 1, 5, {"case_id": cfg["x"]})
"""

SPEC = """
target = "trivial:rollout"
target_id = "trivial"
replicates = {replicates}
axes = {{ x = {{ type = "categorical", values = {values} }} }}
declare = {{ outcomes = ["ok", "bad"], failures = ["bad"] }}
"""

CONDITIONS = 10

# The bare loop: its own interpreter, only the rollout's imports, the Episodes kept.
BARE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from trivial import rollout
conditions = [{{"x": v}} for v in {values}]
kept = []
started = time.perf_counter()
for replicate in range({replicates}):
    for cfg in conditions:
        kept.append(rollout(dict(cfg), replicate))
print(time.perf_counter() - started)
"""

# The sweep command run from a small parent that reports the command's peak RSS (its worker's too:
# the children's rusage covers every descendant that was waited for). The command does not wait
# for its worker's exit, so this parent is made their subreaper (Linux) and waits for it too.
MEASURED = """
import ctypes, os, resource, subprocess, sys
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: an orphaned worker is reparented here
done = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, text=True)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
sys.stderr.write(done.stderr)
print(done.returncode)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(done.stdout)
"""


def bare_seconds(folder: Path, values: list[str], replicates: int) -> float:
    code = BARE.format(values=values, replicates=replicates)
    command = [sys.executable, "-c", code, str(folder)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(done.stdout)


def sweep_seconds(folder: Path, store: Path, episodes: int) -> tuple[float, int]:
    """The sweep's own seconds and the command's peak RSS in KiB."""
    command = [str(Path(sys.executable).with_name("poisson-prove")), "--store", str(store)]
    command += ["sweep", "--yes", "--max-mde", "1", "--json"]
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, str(folder), *command], capture_output=True, text=True, check=True
    )
    code, rss, document = done.stdout.split("\n", 2)
    if int(code) != 0:
        raise SystemExit(f"the sweep failed (exit {code}): {done.stderr}")
    parsed = json.loads(document)
    assert parsed["counts"]["done"] == episodes, parsed["counts"]
    return float(parsed["seconds"]), int(rss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    replicates = args.episodes // CONDITIONS
    n = replicates * CONDITIONS
    values = [f"c{i}" for i in range(CONDITIONS)]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "trivial.py").write_text(textwrap.dedent(ROLLOUT))
        spec = SPEC.format(replicates=replicates, values=values).replace("'", '"')
        (folder / "prove.toml").write_text(spec)
        print(f"{n:,} episodes ({CONDITIONS} conditions x {replicates:,}), sweep with default options")
        print("round  bare/s       sweep/s      ratio  peak RSS  load")
        for round_ in range(args.rounds):
            bare = bare_seconds(folder, values, replicates)
            swept, rss = sweep_seconds(folder, folder / f"store{round_}", n)
            ratio = bare / swept
            ratios.append(ratio)
            load = os.getloadavg()[0]
            print(
                f"{round_ + 1:>5}  {n / bare:>11,.0f}  {n / swept:>11,.0f}  {ratio:.3f}  "
                f"{rss / 1024:>5.0f} MB  {load:.1f}",
                flush=True,
            )
    print(f"ratio sweep/bare: min {min(ratios):.3f}, median {statistics.median(ratios):.3f} (goal: >= 0.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
