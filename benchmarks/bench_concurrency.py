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
"""

from __future__ import annotations

import argparse
import logging
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=500)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--backends", nargs="+", default=["local", "dask", "dask-own"])
    parser.add_argument("--variants", nargs="+", default=["sync", "async"])
    args = parser.parse_args()
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
