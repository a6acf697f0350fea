"""The local pool queues attempts ahead of its threads (and its event loop) so a worker that
finishes starts the next episode at once: never more than `concurrency` episodes run at
once, every task comes back exactly once, and the window is whole again only after a backoff."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from poisson_prove.backends.pool import PoolExecutor
from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import episode_seed
from poisson_prove.episode.run import Job, Task
from poisson_prove.sweep.prepare import MAX_CONCURRENCY
from tests.poisson_prove.backends.conftest import SALT

AGENT = """
import asyncio, threading, time
from poisson_prove import Episode

LOCK = threading.Lock()
NOW = [0]
MOST = [0]
STARTED = []

def _enter(seed):
    with LOCK:
        NOW[0] += 1
        MOST[0] = max(MOST[0], NOW[0])
        STARTED.append(seed)

def _leave():
    with LOCK:
        NOW[0] -= 1

def rollout(cfg, seed):
    _enter(seed)
    time.sleep(0.002)
    _leave()
    return Episode("ok" if seed % 3 else "fail", 1, 2)

async def arollout(cfg, seed):
    _enter(seed)
    await asyncio.sleep(0.002)
    _leave()
    return Episode("ok" if seed % 3 else "fail", 1, 2)
"""


@pytest.mark.parametrize("target", ["rollout", "arollout"])
def test_queued_ahead_the_pool_still_runs_at_most_its_concurrency(tmp_path: Path, target: str) -> None:
    module = f"ahead_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(AGENT)
    job = Job(run_id="r", target=f"{module}:{target}", spec_dir=str(tmp_path), outcomes=("ok", "fail"))
    key = condition_key({"p": 1})
    tasks = [Task(key, {"p": 1}, r, episode_seed(SALT, key, r)) for r in range(400)]
    executor = PoolExecutor({"concurrency": 16})
    try:
        rows = list(executor.execute(job, iter(tasks)))
        agent = sys.modules[module]
        assert sorted(r["replicate"] for r in rows) == list(range(400))  # each exactly once
        assert all(r["error_kind"] is None for r in rows)
        assert {r["seed"]: r["outcome"] for r in rows} == {
            t.seed: "ok" if t.seed % 3 else "fail" for t in tasks
        }
        assert agent.MOST[0] == 16  # the cap held with 16 more queued, and was reached
        assert sorted(agent.STARTED) == sorted(t.seed for t in tasks)  # none started twice
    finally:
        sys.modules.pop(module, None)


def test_concurrency_reaches_a_thousand_and_twenty_four() -> None:
    assert MAX_CONCURRENCY >= 1024  # the measured limit of issue 26 is at 1,024 rollouts at once
