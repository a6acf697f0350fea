"""Start-up of both command lines: this tree against a baseline commit, side by side.

Each command runs in a fresh interpreter with one tree's `src/` first on the path, the two
trees alternating (baseline, this tree, baseline, this tree ...) so that machine noise falls on
both alike; the median of `--runs` runs is printed for each with the ratio (this tree /
baseline). Also `python -c pass`, the floor no command can beat, and the whole of
`poisson-prove sweep --yes` of 100 trivial episodes (the spec and rollout of
benchmarks/bench_sweep.py: 10 conditions x 10 replicates, a rollout that builds one Episode;
the plan, the worker, the store's first run), each run into a fresh store, with its time
beyond `python -c pass` (the issue's goal: <= 0.5 s), that is its wall time less the floor's
median, and the same in CPU seconds (user + system of the command and its worker, which a
loaded machine inflates far less than the wall time). The 1-minute load average is printed
before and after. The baseline tree is `git
archive` of `--baseline` (default: the commit before a small sweep stopped importing every
backend and the instrumentor registry), unpacked to a temporary folder; "this tree" is the
working tree's `src/`, or with `--this REF` that commit's (to leave out uncommitted work).

    .venv/bin/python benchmarks/bench_cli_startup.py [--baseline REF] [--this REF] [--runs 15] [--only sweep]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the last commit before the backends and the instrumentor registry were imported on first use
DEFAULT_BASELINE = "4365d9a"
FLOOR = "python -c pass"
SWEEP = "poisson-prove sweep of 100"

ROLLOUT = """
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("ok" if seed % 10 else "bad", 1, 5, {"case_id": cfg["x"]})
"""
SPEC = """
target = "trivial:rollout"
target_id = "trivial"
replicates = 10
axes = { x = { type = "categorical", values = ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"] } }
declare = { outcomes = ["ok", "bad"], failures = ["bad"] }
"""


def _cli(package: str, *argv: str) -> list[str]:
    return ["-c", f"import sys; from {package} import main; sys.exit(main({list(argv)!r}))"]


COMMANDS = {
    FLOOR: ["-c", "pass"],
    "import poisson_prove": ["-c", "import poisson_prove"],
    "poisson-prove --help": _cli("poisson_prove.cli", "--help"),
    "poisson-prove runs --help": _cli("poisson_prove.cli", "runs", "--help"),
    "poisson-prove sweep --help": _cli("poisson_prove.cli", "sweep", "--help"),
    "proveai --help": _cli("proveai.cli", "--help"),
    "proveai status --help": _cli("proveai.cli", "status", "--help"),
    "import proveai": ["-c", "import proveai"],
    # what a pipeline that captures (no checks) loads: the live trace, the exporter, the store
    "proveai capture imports": ["-c", "from proveai import monitor, trace, FileExporter; trace"],
    # the whole command, as the console script runs it; STORE is a fresh folder each run
    SWEEP: _cli("poisson_prove.cli", "--store", "STORE", "sweep", "small.toml", "--yes", "--max-mde", "1"),
}


def unpack(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


class Runner:
    """Runs one command on one tree in a fresh interpreter, in the folder holding the sweep's spec."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.stores = 0

    def once(self, src: Path, argv: list[str]) -> tuple[float, float]:
        """Wall seconds and CPU seconds (user + system of the command and every child it waited for)."""
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(src), str(self.folder)]),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        self.stores += 1
        argv = [str(self.folder / f"store-{self.stores}") if arg == "STORE" else arg for arg in argv]
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, *argv], cwd=self.folder, env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, check=False,
        )
        elapsed = time.perf_counter() - started
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed on {src} ({done.returncode}): {done.stderr[-2000:]}")
        return elapsed, (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    parser.add_argument("--this", metavar="REF", help="time this commit's src/ instead of the working tree's")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--only", choices=["sweep"], help="time only the floor and the sweep")
    options = parser.parse_args()
    commands = {k: v for k, v in COMMANDS.items() if not options.only or k in (FLOOR, SWEEP)}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "trivial.py").write_text(textwrap.dedent(ROLLOUT))
        (folder / "small.toml").write_text(SPEC)
        baseline = unpack(options.baseline, folder / "baseline")
        current = unpack(options.this, folder / "this") if options.this else ROOT / "src"
        for src in (baseline, current):  # compile both trees' bytecode once, outside the timing
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
        runner = Runner(folder)
        load_before = os.getloadavg()[0]
        this = options.this or "the working tree"
        print(f"median of {options.runs} runs; baseline {options.baseline}, this tree {this}; "
              f"load {load_before:.1f}")
        print(f"{'command':<28} {'baseline':>9} {'this tree':>9} {'ratio':>6}")
        medians: dict[str, tuple[float, float]] = {}
        cpu: dict[str, tuple[float, float]] = {}
        for name, argv in commands.items():
            before, after = [], []
            for _ in range(options.runs):
                before.append(runner.once(baseline, argv))
                after.append(runner.once(current, argv))
            b, a = statistics.median(w for w, _ in before), statistics.median(w for w, _ in after)
            medians[name] = (b, a)
            cpu[name] = (statistics.median(c for _, c in before), statistics.median(c for _, c in after))
            print(f"{name:<28} {b * 1000:>7.0f}ms {a * 1000:>7.0f}ms {a / b:>6.2f}")
        for label, figures in (("wall", medians), ("CPU", cpu)):
            (floor_b, floor_a), (sweep_b, sweep_a) = figures[FLOOR], figures[SWEEP]
            gap_b, gap_a = sweep_b - floor_b, sweep_a - floor_a
            print(
                f"{SWEEP} beyond {FLOOR}, {label}: baseline {gap_b:.3f} s, this tree "
                f"{gap_a:.3f} s, ratio {gap_a / gap_b:.2f} (goal <= 0.5 s)"
            )
        print(f"load {load_before:.1f} -> {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
