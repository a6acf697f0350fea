"""The agents the backend tests sweep (copied into each test's folder as fleet.py).

Outcomes and times are pure functions of (cfg, seed), so any backend must store the same rows
as the sequential one. State that must survive processes lives in files under ./state.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

from poisson_prove import Episode

STATE = Path(__file__).resolve().parent / "state"
if __name__ != "tests.poisson_prove.backends.fleet_agent":
    # Only the copy a test sweeps keeps state; importing the source for _episode writes nothing.
    STATE.mkdir(exist_ok=True)


class RateLimitError(Exception):
    """What a model API client raises when throttled."""


class Throttled(Exception):
    """Named by its qualified name, fleet.Throttled, in the tests."""


def _episode(cfg, seed):
    rng = random.Random(seed)
    outcome = "fail" if rng.random() < cfg["p"] else "ok"
    return Episode(outcome, rng.randint(1, 9), 10, {"case_id": f"case-{seed % 7}"})


def _mark(kind: str, seed: int) -> int:
    """Append one attempt to ./state/<kind>-<seed>; return how many there were before."""
    path = STATE / f"{kind}-{seed}"
    with open(path, "a") as handle:
        handle.write("x")
    return path.stat().st_size - 1


def rollout(cfg, seed):
    time.sleep(cfg.get("sleep", 0.002))
    _mark("start", seed)
    return _episode(cfg, seed)


async def arollout(cfg, seed):
    await asyncio.sleep(cfg.get("sleep", 0.002))
    return _episode(cfg, seed)


_barrier = threading.Barrier(4, timeout=20)


def together(cfg, seed):
    """Returns only once four episodes wait here at once: proof they run concurrently."""
    _barrier.wait()
    return _episode(cfg, seed)


_async_barrier: asyncio.Barrier | None = None
_loops: set[int] = set()


async def atogether(cfg, seed):
    """The async twin: four coroutines must meet, on one event loop."""
    global _async_barrier
    if _async_barrier is None:
        _async_barrier = asyncio.Barrier(4)
    _loops.add(id(asyncio.get_running_loop()))
    async with asyncio.timeout(20):
        await _async_barrier.wait()
    (STATE / "loops").write_text(str(len(_loops)))
    (STATE / f"thread-{threading.get_ident()}").touch()
    return _episode(cfg, seed)


def hang(cfg, seed):
    """Every fourth seed hangs, with a grandchild process, until it is killed; the next seed
    of every four ends its own process without returning."""
    if seed % 4 == 0:
        child = subprocess.Popen(["sleep", "600"])
        (STATE / f"hung-{seed}").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(600)
    if seed % 4 == 1:
        os._exit(3)
    return _episode(cfg, seed)


def flaky(cfg, seed):
    """Rate-limited on the first two attempts of every seed, then answers."""
    if _mark("attempt", seed) < 2:
        raise RateLimitError("429 Too Many Requests")
    return _episode(cfg, seed)


def troubled(cfg, seed):
    """Always throttled in the p=0.2 condition (every retry is spent); in the other, the
    agent's own bug (never retried)."""
    _mark("attempt", seed)
    if cfg["p"] == 0.2:
        raise Throttled("quota exhausted")
    raise ValueError("the agent's own bug")


def _claim(name: str) -> bool:
    """True for exactly one caller across processes: the one that creates ./state/<name>."""
    try:
        fd = os.open(STATE / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(fd, f"{os.getpid()} {os.getppid()}".encode())
    os.close(fd)
    return True


def dies_once(cfg, seed):
    """Once six episodes have started, one of them kills its own worker process (SIGKILL),
    with its episode in flight; every later attempt runs normally."""
    time.sleep(cfg.get("sleep", 0.002))
    _mark("start", seed)
    if len(list(STATE.glob("start-*"))) >= 6 and _claim("killed"):
        os.kill(os.getpid(), signal.SIGKILL)
    return _episode(cfg, seed)


def listening(cfg, seed):
    """Records the addresses this worker process listens on (hex, from /proc/net/tcp)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:  # 0A: LISTEN
                found.append(parts[1].split(":")[0])
    (STATE / f"listen-{os.getpid()}").write_text(" ".join(found))
    return _episode(cfg, seed)


def slow(cfg, seed):
    _mark("start", seed)
    time.sleep(0.2)
    return _episode(cfg, seed)


def stall(cfg, seed):
    """Every fourth seed waits far longer than any timeout the tests set."""
    if seed % 4 == 0:
        time.sleep(60)
    return _episode(cfg, seed)
