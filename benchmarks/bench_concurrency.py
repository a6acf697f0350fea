"""How concurrency pays: 500 rollouts that each wait 50 ms, end to end through the library's
sweep (plan, executor, store writes), at concurrency 1, 8 and 64, on the local backend and on a
local Dask cluster, sync (time.sleep) and async (asyncio.sleep) rollouts, all in one run.

Prints, per case, episodes per second against the ideal (concurrency / 0.05 s), the speed-up
over the sequential local backend measured in the same run, and for Dask the per-episode
overhead, (wall - ideal wall) / episodes. `dask` sweeps against a LocalCluster the benchmark
starts beforehand (as `[dask] address`, laid out as the backend would: `concurrency` threads),
so the overhead is Dask's per episode; `dask-own` lets each sweep start and close its own
cluster, the end-to-end figure a user sees, start included. Goals: local at 64 >= 0.8 of ideal
(50x sequential); Dask overhead < 5 ms per episode.

    .venv/bin/python benchmarks/bench_concurrency.py [--rollouts 500] [--concurrency 1 8 64]
        [--backends local dask dask-own] [--variants sync async]

`--against-bare` measures instead how near the limit the local backend comes (issue 26): per
round, side by side, a bare `ThreadPoolExecutor(C)` (sync) or an asyncio loop with a
`Semaphore(C)` (async) calling the same rollout in a fresh interpreter that imports only the
rollout, then the installed `poisson-prove sweep --concurrency C --json` (its own `seconds`:
the episodes and the store writes); prints both rates, the ratio and the load average, then
the min and median ratio per case. Goal: >= 0.8 at concurrency 1,024. The sweep raises the GIL's
switch interval while many threads run (50 us a thread, at most 50 ms; docs/backends.md);
`--bare-interval 0.05` gives the bare side the same interval, to see how much of the ratio is that.

    .venv/bin/python benchmarks/bench_concurrency.py --against-bare [--rollouts 10240]
        [--concurrency 1024] [--variants sync async] [--rounds 5] [--bare-interval 0.05]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WAIT_S = 0.05
AGENT = f'''
import asyncio, random, time
from poisson_prove import Episode

def _episode(seed):
    rng = random.Random(seed)
    return Episode("fail" if rng.random() < 0.3 else "ok", rng.randint(1, 9), 10)

def wait(cfg, seed):
    time.sleep({WAIT_S})
    return _episode(seed)

async def await_(cfg, seed):
    await asyncio.sleep({WAIT_S})
    return _episode(seed)
'''


def _project(root: Path, rollouts: int) -> Path:
    (root / "waiting_agent.py").write_text(AGENT)
    replicates = rollouts // 2
    (root / "prove.toml").write_text(
        'target = "waiting_agent:wait"\ntarget_id = "waiting"\n'
        f"replicates = {replicates}\n"
        '[axes.arm]\ntype = "categorical"\nvalues = ["a", "b"]\n'
        '[declare]\noutcomes = ["ok", "fail"]\nfailures = ["fail"]\n'
    )
    return root / "prove.toml"


def _sweep_seconds(
    spec: Path, store: Path, target: str, backend: str, overrides: dict[str, object], name: str
) -> float:
    """Wall seconds of the sweep's execution as the sweep itself reports them (executor start,
    every episode, every batch write); the plan and the import check, the same for every case,
    are left out."""
    import poisson_prove

    result = poisson_prove.run_sweep(
        spec, store=store, target=target, name=name, backend=backend, overrides=overrides, max_mde=1.0
    )
    if result.status != "complete" or result.errored:
        raise SystemExit(f"{name}: the sweep did not complete cleanly ({result.verdict})")
    return result.seconds


class _DaskCluster:
    """A LocalCluster laid out as the dask backend lays out its own for `concurrency`."""

    def __init__(self, concurrency: int) -> None:
        import shutil

        from distributed import LocalCluster

        from poisson_prove.backends.dask import DaskExecutor

        workers, threads = DaskExecutor._layout(2, concurrency)
        self._scratch = tempfile.mkdtemp(prefix="bench-dask-")
        self._rmtree = shutil.rmtree
        started = time.perf_counter()
        self.cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=threads,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            local_directory=self._scratch,
            silence_logs=logging.ERROR,
        )
        self.start_seconds = time.perf_counter() - started

    def close(self) -> None:
        self.cluster.close()
        self._rmtree(self._scratch, ignore_errors=True)


# The bare side: its own interpreter, the rollout's module only, every Episode kept.
BARE = {
    "sync": """
import sys, time
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, sys.argv[1])
from waiting_agent import wait
n, c = int(sys.argv[2]), int(sys.argv[3])
if float(sys.argv[4]) > 0:
    sys.setswitchinterval(float(sys.argv[4]))
cfgs = [{"arm": "a"}, {"arm": "b"}]
started = time.perf_counter()
with ThreadPoolExecutor(c) as pool:
    kept = list(pool.map(lambda i: wait(dict(cfgs[i % 2]), i), range(n)))
print(time.perf_counter() - started)
""",
    "async": """
import asyncio, sys, time
sys.path.insert(0, sys.argv[1])
from waiting_agent import await_
n, c = int(sys.argv[2]), int(sys.argv[3])
if float(sys.argv[4]) > 0:
    sys.setswitchinterval(float(sys.argv[4]))
cfgs = [{"arm": "a"}, {"arm": "b"}]

async def main():
    gate = asyncio.Semaphore(c)

    async def one(i):
        async with gate:
            return await await_(dict(cfgs[i % 2]), i)

    return await asyncio.gather(*(one(i) for i in range(n)))

started = time.perf_counter()
kept = asyncio.run(main())
print(time.perf_counter() - started)
""",
}


def _bare_seconds(root: Path, variant: str, n: int, concurrency: int, interval: float = 0.0) -> float:
    command = [sys.executable, "-c", BARE[variant], str(root), str(n), str(concurrency), str(interval)]
    return float(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def _cli_seconds(root: Path, store: Path, target: str, n: int, concurrency: int) -> float:
    command = [str(Path(sys.executable).with_name("poisson-prove")), "--store", str(store), "sweep"]
    command += ["--yes", "--json", "--max-mde", "1", "--target", target, "--concurrency", str(concurrency)]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the sweep failed (exit {done.returncode}): {done.stderr}")
    document = json.loads(done.stdout)
    assert document["counts"]["done"] == n, document["counts"]
    return float(document["seconds"])


def against_bare(args: argparse.Namespace) -> int:
    n = args.rollouts - args.rollouts % 2
    targets = {"sync": "waiting_agent:wait", "async": "waiting_agent:await_"}
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        root = Path(tmp)
        _project(root, n)
        print(
            f"{n} rollouts of {WAIT_S * 1000:.0f} ms each: bare pool (fresh interpreter) against "
            "`poisson-prove sweep --concurrency C` (its own seconds), side by side"
        )
        print(
            f"{'variant':7} {'conc':>5} {'round':>5} {'bare ep/s':>10} {'sweep ep/s':>10} "
            f"{'ratio':>6} {'of ideal':>8} {'load':>5}"
        )
        summary = []
        for variant in args.variants:
            for concurrency in args.concurrency:
                ratios = []
                for round_ in range(args.rounds):
                    bare = _bare_seconds(root, variant, n, concurrency, args.bare_interval)
                    store = root / f"store-{variant}-{concurrency}-{round_}"
                    swept = _cli_seconds(root, store, targets[variant], n, concurrency)
                    ratios.append(bare / swept)
                    ideal = concurrency / WAIT_S
                    print(
                        f"{variant:7} {concurrency:>5} {round_ + 1:>5} {n / bare:>10.0f} "
                        f"{n / swept:>10.0f} {bare / swept:>6.3f} {n / swept / ideal:>8.3f} "
                        f"{os.getloadavg()[0]:>5.1f}",
                        flush=True,
                    )
                summary.append(
                    f"{variant} at {concurrency}: sweep/bare min {min(ratios):.3f}, "
                    f"median {statistics.median(ratios):.3f} (goal >= 0.8 at 1024)"
                )
        print()
        for line in summary:
            print(line)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=None)
    parser.add_argument("--concurrency", type=int, nargs="+", default=None)
    parser.add_argument("--backends", nargs="+", default=["local", "dask", "dask-own"])
    parser.add_argument("--variants", nargs="+", default=["sync", "async"])
    parser.add_argument("--against-bare", action="store_true")
    parser.add_argument("--rounds", type=int, default=5, help="with --against-bare")
    parser.add_argument(
        "--bare-interval",
        type=float,
        default=0.0,
        help="with --against-bare: the bare side's sys.setswitchinterval (0: Python's default, 5 ms)",
    )
    args = parser.parse_args()
    if args.against_bare:
        args.rollouts = args.rollouts or 10_240
        args.concurrency = args.concurrency or [1024]
        return against_bare(args)
    args.rollouts = args.rollouts or 500
    args.concurrency = args.concurrency or [1, 8, 64]
    n = args.rollouts - args.rollouts % 2
    targets = {"sync": "waiting_agent:wait", "async": "waiting_agent:await_"}
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        root = Path(tmp)
        spec = _project(root, n)
        store = root / "prove-runs"
        sys.path.insert(0, str(root))
        print(f"{n} rollouts of {WAIT_S * 1000:.0f} ms each, end to end through the sweep "
              "(store writes included)")
        print(f"{'backend':8} {'variant':7} {'conc':>4} {'seconds':>8} {'ep/s':>8} {'ideal':>8} "
              f"{'of ideal':>8} {'vs seq':>7} {'overhead/ep':>12}")
        sequential: float | None = None
        goals: list[str] = []
        for backend in args.backends:
            for variant in args.variants if backend != "dask-own" else ["sync"]:
                for concurrency in args.concurrency:
                    name = f"{backend}-{variant}-{concurrency}"
                    overrides: dict[str, object] = {"concurrency": concurrency}
                    cluster = _DaskCluster(concurrency) if backend == "dask" else None
                    if cluster is not None:
                        overrides["address"] = cluster.cluster.scheduler_address
                    try:
                        seconds = _sweep_seconds(
                            spec, store, targets[variant], backend.removesuffix("-own"), overrides, name
                        )
                    finally:
                        if cluster is not None:
                            cluster.close()
                    rate = n / seconds
                    ideal = concurrency / WAIT_S
                    if backend == "local" and variant == "sync" and concurrency == 1:
                        sequential = seconds
                    speedup = f"{sequential / seconds:6.1f}x" if sequential else "      -"
                    overhead = ""
                    if backend.startswith("dask"):
                        per_episode = (seconds - n * WAIT_S / concurrency) / n
                        overhead = f"{per_episode * 1000:8.2f} ms"
                        if concurrency == max(args.concurrency) and cluster is not None:
                            goals.append(f"dask {variant} at {concurrency}: overhead "
                                         f"{per_episode * 1000:.2f} ms/episode (goal < 5 ms; the "
                                         f"cluster, started before, took {cluster.start_seconds:.2f} s)")
                    elif concurrency == max(args.concurrency):
                        goals.append(f"local {variant} at {concurrency}: {rate / ideal:.2f} of ideal "
                                     f"(goal >= 0.80), {speedup.strip()} sequential (goal 50x)")
                    print(f"{backend:8} {variant:7} {concurrency:>4} {seconds:8.2f} {rate:8.1f} "
                          f"{ideal:8.1f} {rate / ideal:8.2f} {speedup:>7} {overhead:>12}", flush=True)
        print()
        for line in goals:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
