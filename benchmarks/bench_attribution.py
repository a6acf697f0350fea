"""What naming the agent costs `poisson-prove diff`: two paired runs of the pipeline example.

`poisson-prove init --example pipeline` writes the three-agent pipeline (classify -> draft ->
qa_check, each a proveai `@monitor` agent, over a seeded stand-in model); the installed
`poisson-prove sweep` runs it with every option at its default, `--episodes` episodes in all
(100,002 by default: 3 conditions x 33,334 replicates), then its patched twin on the same seeds
(`--pair-with`), whose `malformed` rate rises. Every episode stores three agent spans.

The same two runs are copied into a second store with the `spans` and `agent_calls` columns
emptied (null in every row, the rest as written): there `diff` finds no agent spans and
attributes nothing, which is `diff` without attribution (`agent_calls`: the typed agent calls
the attribution reads since poisson-prove.episodes/2; a baseline before it reads `spans`).
Then, side by side, A, B, A, B, ... for `--rounds` rounds: `poisson-prove diff before after
--json` on each store, a fresh process each, and per round the difference A - B (what
attribution adds), reported as min and median with the 1-minute load average, in wall time
and in CPU seconds (user + system: what the machine's load moves less). The attribution
printed is checked: `draft` named on every moved row, and its counts honest (pairs read never
above the pairs counted; a row read in part says so).

`--baseline REF` also runs A on the `src/` of commit REF (unpacked from git) in the same
rounds, so a change is measured against the code before it. `--keep DIR` keeps (and reuses)
the swept runs there.

    .venv/bin/python benchmarks/bench_attribution.py [--episodes 100002] [--rounds 5] [--baseline REF]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PATCHED = "poisson_prove.examples.mock_pipeline:rollout_patched"


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def unpack(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def env_for(src: Path | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PROVE_HOME")}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def sweep_pair(folder: Path, store: Path, episodes: int) -> None:
    """The example's two paired runs, through the installed command line at its defaults."""
    if (folder / "swept").is_file():
        return
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "prove.toml"
    spec.unlink(missing_ok=True)
    prove = str(BIN / "poisson-prove")
    subprocess.run([prove, "init", "--example", "pipeline"], cwd=folder, check=True, capture_output=True)
    replicates = -(-episodes // 3)
    text = spec.read_text(encoding="utf-8")
    spec.write_text(
        "\n".join(
            f"replicates = {replicates}" if line.startswith("replicates =") else line
            for line in text.splitlines()
        )
        + "\n",
        encoding="utf-8",
    )
    base = [prove, "sweep", "--yes", "--store", str(store)]
    env = env_for(None)
    subprocess.run([*base, "--name", "before"], cwd=folder, env=env, check=True, capture_output=True)
    subprocess.run(
        [*base, "--name", "after", "--target", PATCHED, "--pair-with", "before"],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
    )
    (folder / "swept").write_text("yes\n")


def without_spans(store: Path, into: Path) -> None:
    """A copy of the store whose batch files hold null spans and agent calls (everything else
    as written)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(store, into, ignore=shutil.ignore_patterns(".dashboard-cache", "*.lock"))
    for path in sorted(into.glob("*/episodes/*.parquet")):
        table = pq.read_table(path)
        for name in ("spans", "agent_calls"):
            at = table.schema.get_field_index(name)
            if at >= 0:
                empty = pa.nulls(table.num_rows, type=table.schema.field(at).type)
                table = table.set_column(at, table.schema.field(at), empty)
        pq.write_table(table, path, compression="zstd")


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str], cpu: list[float] | None = None) -> tuple[float, str]:
    """(wall seconds, stdout) of one fresh process; its CPU seconds (user + system) appended to
    `cpu` when given (less moved by the machine's load than the wall time)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        used = cpu_of_children()
        started = time.perf_counter()
        child = subprocess.run(argv, stdout=out, stderr=err, env=env, timeout=900)
        seconds = time.perf_counter() - started
        if cpu is not None:
            cpu.append(cpu_of_children() - used)
        out.seek(0)
        err.seek(0)
        if child.returncode not in (0, 1):  # 1: a rate rose (diff reports, it does not gate)
            raise SystemExit(f"{argv[:3]} failed ({child.returncode}): {err.read().decode()}")
        return seconds, out.read().decode()


def diff_argv(store: Path, src: Path | None) -> list[str]:
    if src is None:
        return [str(BIN / "poisson-prove"), "diff", "before", "after", "--json", "--store", str(store)]
    return [sys.executable, "-m", "poisson_prove", "diff", "before", "after", "--json", "--store", str(store)]


def checked(document: dict) -> list[str]:
    """The attribution's rows as one line each; a SystemExit when it is wrong or dishonest."""
    attribution = document.get("attribution") or {}
    if not attribution.get("available"):
        raise SystemExit(f"no attribution: {attribution.get('reason')}")
    lines = []
    for row in attribution["rows"]:
        if row["flipped_read"] > row["flipped_pairs"] or row["unflipped_read"] > row["unflipped_pairs"]:
            raise SystemExit(f"more pairs read than counted: {row}")
        if row["named"] != "draft":
            raise SystemExit(f"{row['label']} {row['outcome']}: named {row['named']!r}, not draft")
        lines.append(
            f"{row['label']} {row['outcome']} {row['verdict']}: {row['named']}, flipped pairs "
            f"{row['flipped_read']:,} read of {row['flipped_pairs']:,}, unflipped "
            f"{row['unflipped_read']:,} of {row['unflipped_pairs']:,}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_002, help="episodes per run (3 conditions)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", help="also run diff with attribution on this commit's src/")
    parser.add_argument("--keep", type=Path, help="sweep into (and reuse) this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep.resolve() if args.keep else Path(tmp) / "runs"
        store = folder / "store"
        started = time.perf_counter()
        sweep_pair(folder, store, args.episodes)
        print(f"swept two runs of {args.episodes:,} episodes ({time.perf_counter() - started:.0f} s)")
        bare = Path(tmp) / "no-spans"
        without_spans(store, bare)
        sides: dict[str, tuple[Path, Path | None]] = {
            "A with spans": (store, None),
            "B spans empty": (bare, None),
        }
        if args.baseline:
            sides[f"A on {args.baseline}"] = (store, unpack(args.baseline, Path(tmp) / "baseline"))
        for name, (where, src) in sides.items():  # warm the page cache once
            _, out = timed(diff_argv(where, src), env_for(src))
            if name == "A with spans":
                for line in checked(json.loads(out)):
                    print(f"  {line}")
        seconds: dict[str, list[float]] = {name: [] for name in sides}
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        loads = []
        for _ in range(args.rounds):
            loads.append(load())
            for name, (where, src) in sides.items():
                seconds[name].append(timed(diff_argv(where, src), env_for(src), cpu[name])[0])
        print(f"{args.rounds} rounds, load average {', '.join(loads)}")
        for name, values in seconds.items():
            print(f"  diff, {name:<22} min {min(values):6.2f} s   median {statistics.median(values):6.2f} s")
        for name, values in seconds.items():
            if name.startswith("A"):
                added = [a - b for a, b in zip(values, seconds["B spans empty"], strict=True)]
                used = [a - b for a, b in zip(cpu[name], cpu["B spans empty"], strict=True)]
                print(
                    f"  attribution adds ({name}): min {min(added):+.2f} s   "
                    f"median {statistics.median(added):+.2f} s   (goal: <= ~1 s); CPU "
                    f"min {min(used):+.2f} s   median {statistics.median(used):+.2f} s"
                )


if __name__ == "__main__":
    main()
