"""Start-up of both command lines: this tree against a baseline commit, side by side.

Each command runs in a fresh interpreter with one tree's `src/` first on the path, the two
trees alternating so that machine noise falls on both alike; the median of `--runs` runs is
printed for each with the ratio (this tree / baseline). Also `python -c pass`, the floor no
command can beat. The baseline tree is `git archive` of `--baseline` (default: the commit
before the command lines imported verbs lazily), unpacked to a temporary folder.

    .venv/bin/python benchmarks/bench_cli_startup.py [--baseline REF] [--runs 15]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the last commit before prove_common and lazy verbs
DEFAULT_BASELINE = "a1a46ac"


def _cli(package: str, *argv: str) -> list[str]:
    return ["-c", f"import sys; from {package} import main; sys.exit(main({list(argv)!r}))"]


COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "import poisson_prove": ["-c", "import poisson_prove"],
    "poisson-prove --help": _cli("poisson_prove.cli", "--help"),
    "poisson-prove runs --help": _cli("poisson_prove.cli", "runs", "--help"),
    "proveai --help": _cli("proveai.cli", "--help"),
    "proveai status --help": _cli("proveai.cli", "status", "--help"),
    "import proveai": ["-c", "import proveai"],
    # what a pipeline that captures (no checks) loads: the live trace, the exporter, the store
    "proveai capture imports": ["-c", "from proveai import monitor, trace, FileExporter; trace"],
}


def unpack(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def once(src: Path, argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    subprocess.run([sys.executable, *argv], env=env, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        baseline = unpack(options.baseline, Path(tmp))
        current = ROOT / "src"
        for src in (baseline, current):  # compile both trees' bytecode once, outside the timing
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
        print(f"median of {options.runs} runs; baseline {options.baseline}")
        print(f"{'command':<28} {'baseline':>9} {'this tree':>9} {'ratio':>6}")
        for name, argv in COMMANDS.items():
            before, after = [], []
            for _ in range(options.runs):
                before.append(once(baseline, argv))
                after.append(once(current, argv))
            b, a = statistics.median(before), statistics.median(after)
            print(f"{name:<28} {b * 1000:>7.0f}ms {a * 1000:>7.0f}ms {a / b:>6.2f}")


if __name__ == "__main__":
    main()
