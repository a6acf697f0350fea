"""Sweep overhead and start-up: trivial episodes through `poisson_prove.run_sweep` and the
installed `poisson-prove sweep`, against a bare loop, every side in a fresh interpreter of its
own, side by side (A, B, A, B ... for `--rounds` rounds); each ratio printed as the min and
median of the per-round ratio, with the 1-minute load average.

- bare loop: a fresh interpreter that imports only the rollout, calls it for every episode and
  keeps the Episodes; its figure is its own loop time.
- `run_sweep`: a fresh interpreter that imports poisson_prove, warms up with a small sweep
  (imports, the power computation), then times `run_sweep` of the episodes in batches of
  `--batch-size` rows (the seed hash, the call, timing, validation, rows, Arrow conversion,
  Parquet batches with fsync, the manifest and events).
- `poisson-prove sweep --yes --json` with every other option at its default: its own `seconds`
  (the episodes, their batches and the manifest; not start-up or the plan).
- start-up: the wall time of `poisson-prove sweep --yes` of 100 trivial episodes beyond
  `python -c pass`, whole command (goal: <= 0.5 s). With `--baseline REF` the same command is
  also run on the `src/` of commit REF, in the same rounds.

    .venv/bin/python benchmarks/bench_sweep.py [--episodes 100000] [--rounds 5] [--baseline REF]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

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
VALUES = [f"c{i}" for i in range(CONDITIONS)]

# The bare loop a user would write: its own script, the rollout's imports only.
BARE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from trivial import rollout
conditions = [{"x": v} for v in VALUES]
replicates = int(sys.argv[2])
kept = []
started = time.perf_counter()
for replicate in range(replicates):
    for cfg in conditions:
        kept.append(rollout(dict(cfg), replicate))
print(time.perf_counter() - started)
""".replace("VALUES", repr(VALUES))

# The library's sweep in its own interpreter, warmed up by a small sweep first.
LIBRARY = """
import sys, time
from pathlib import Path
import poisson_prove
folder, batch = Path(sys.argv[1]), int(sys.argv[3])
sys.path.insert(0, str(folder))
poisson_prove.run_sweep(folder / "spec.toml", store=folder / "warm", max_rollouts=2_000)
started = time.perf_counter()
result = poisson_prove.run_sweep(folder / "spec.toml", store=folder / sys.argv[4], batch_size=batch)
elapsed = time.perf_counter() - started
assert result.status == "complete" and result.done == int(sys.argv[2]), result
print(elapsed)
"""


def load() -> float:
    return os.getloadavg()[0]


def unpack(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def env_for(folder: Path, src: Path | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([*([str(src)] if src else []), str(folder)])
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({done.returncode}): {done.stderr}")
    return wall, done.stdout


def line(label: str, values: list[float], loads: list[float], goal: str = "") -> str:
    text = f"{label:<44} min {min(values):.3f} / median {statistics.median(values):.3f} (n={len(values)})"
    return f"{text}, load {min(loads):.1f}-{max(loads):.1f}" + (f"  [{goal}]" if goal else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=25_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", help="also time the start-up on this commit's src/ (e.g. HEAD~3)")
    args = parser.parse_args()
    replicates = args.episodes // CONDITIONS
    n = replicates * CONDITIONS
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "trivial.py").write_text(textwrap.dedent(ROLLOUT))
        values = json.dumps(VALUES)
        (folder / "spec.toml").write_text(SPEC.format(replicates=replicates, values=values))
        (folder / "small.toml").write_text(SPEC.format(replicates=10, values=values))
        trees: dict[str, Path | None] = {"this tree": None}
        if args.baseline:
            trees[f"baseline {args.baseline}"] = unpack(args.baseline, folder / "baseline")
        script = str(BIN / "poisson-prove")
        rates: dict[str, list[float]] = {"library": [], "cli": []}
        start_up: dict[str, list[float]] = {name: [] for name in trees}
        bare_rates: list[float] = []
        loads: list[float] = []
        for round_ in range(args.rounds):
            loads.append(load())
            _, out = run([sys.executable, "-c", BARE, str(folder), str(replicates)], folder, env_for(folder))
            bare = n / float(out)
            bare_rates.append(bare)
            _, out = run(
                [sys.executable, "-c", LIBRARY, str(folder), str(n), str(args.batch_size), f"lib{round_}"],
                folder,
                env_for(folder),
            )
            rates["library"].append(n / float(out) / bare)
            cli = [
                script,
                "--store",
                str(folder / f"cli{round_}"),
                "sweep",
                "spec.toml",
                "--yes",
                "--max-mde",
                "1",
            ]
            _, out = run([*cli, "--json"], folder, env_for(folder))
            document = json.loads(out)
            assert document["counts"]["done"] == n, document["counts"]
            rates["cli"].append(n / float(document["seconds"]) / bare)
            floor, _ = run([sys.executable, "-c", "pass"], folder, env_for(folder))
            for name, src in trees.items():
                store = folder / f"small-{round_}-{len(start_up[name])}-{name.split()[0]}"
                wall, _ = run(
                    [script, "--store", str(store), "sweep", "small.toml", "--yes", "--max-mde", "1"],
                    folder,
                    env_for(folder, src),
                )
                start_up[name].append(wall - floor)
        print(
            f"episodes {n:,} ({CONDITIONS} conditions x {replicates:,} replicates); bare loop "
            f"{statistics.median(bare_rates):,.0f} episodes/s (median, its own interpreter)"
        )
        print(line(f"run_sweep / bare loop (batches of {args.batch_size:,})", rates["library"], loads))
        print(line("poisson-prove sweep (defaults) / bare loop", rates["cli"], loads))
        for name, gaps in start_up.items():
            print(line(f"sweep of 100 beyond python -c pass, s ({name})", gaps, loads, "goal <= 0.5 s"))
        for name in list(trees)[1:]:
            per_round = [a / b for a, b in zip(start_up["this tree"], start_up[name], strict=True)]
            print(line(f"that time, this tree / {name}", per_round, loads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
