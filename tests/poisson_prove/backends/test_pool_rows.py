"""The local pool builds its rows the way one episode's runner does: a sync rollout's episodes
run through one `run_into` per thread, an async rollout's rows are built a turn of the event loop
at a time, and every row is the one `run_episode` (sync) or `async_attempt` (async) gives for the
same task, whatever the rollout did. Many threads raise the GIL's switch interval while they run.

Each test runs many cases through one executor, in this process: no subprocess per case."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from poisson_prove.backends._attempt import async_attempt
from poisson_prove.backends.pool import PoolExecutor
from poisson_prove.episode.run import Job, Task, run_episode

# Each replicate r picks a behaviour by r % 9: a valid episode with a meta, one raising, one
# calling sys.exit, an undeclared outcome, t past the horizon, a meta JSON cannot hold, a named
# infrastructure error, a non-Episode, a valid episode recording a span.
AGENT = """
import asyncio, sys
from poisson_prove import Episode
from poisson_prove.episode.recording import current_spans

class Throttled(Exception):
    pass

def _behave(cfg, seed, replicate):
    kind = replicate % 9
    if kind == 0:
        return Episode("ok", 1, 5, {"case_id": f"c{seed % 7}", "n": replicate})
    if kind == 1:
        raise ValueError(f"boom {seed}")
    if kind == 2:
        sys.exit(4)
    if kind == 3:
        return Episode("nope", 1, 5)
    if kind == 4:
        return Episode("fail", 9, 5)
    if kind == 5:
        return Episode("ok", 1, 5, {"x": float("nan")})
    if kind == 6:
        raise Throttled("slow down")
    if kind == 7:
        return {"outcome": "ok"}
    spans = current_spans()
    if spans is not None:
        spans.append({"name": "step", "kind": "step", "attributes": {"i": replicate}})
    return Episode("fail", 2, 5, {"case_id": "s"})

def rollout(cfg, seed):
    return _behave(cfg, seed, cfg["r"])

async def arollout(cfg, seed):
    await asyncio.sleep(0)
    return _behave(cfg, seed, cfg["r"])
"""

TIMING = ("started_at", "duration_s")


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A row without its clock fields."""
    return {k: v for k, v in row.items() if k not in TIMING}


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[str]:
    module = f"rows_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(AGENT)
    sys.path.insert(0, str(tmp_path))
    try:
        yield module
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)


def _tasks(count: int) -> list[Task]:
    return [Task(f"r={r % 3}", {"r": r}, r, 1_000 + 7 * r) for r in range(count)]


@pytest.mark.parametrize("target", ["rollout", "arollout"])
@pytest.mark.parametrize("infra", [(), ("Throttled",)])
def test_the_pool_rows_are_the_single_episode_rows(agent: str, target: str, infra: tuple[str, ...]) -> None:
    job = Job(
        run_id="run-1",
        target=f"{agent}:{target}",
        spec_dir=".",
        outcomes=("ok", "fail"),
        infra_errors=infra,
    )
    tasks = _tasks(90)
    executor = PoolExecutor({"concurrency": 8, "infra_retries": 0})
    rows = list(executor.execute(job, iter(tasks)))
    module = sys.modules[agent]
    expected = {}
    for task in tasks:
        if target == "rollout":
            row = run_episode(module.rollout, job, task)
        else:
            row = asyncio.run(async_attempt(module.arollout, job, task)).row
        if infra and task.replicate % 9 == 6:  # after its last retry: no outcome, `infrastructure`
            row = {**row, "outcome": None, "error_kind": "infrastructure",
                   "error_message": "Throttled: slow down (after 0 retries)"}
        expected[task.replicate] = _comparable(row)
    assert len(rows) == len(tasks)  # one row per task, each exactly once
    assert {row["replicate"]: _comparable(row) for row in rows} == expected
    kinds = {row["replicate"] % 9: row["error_kind"] for row in rows}
    assert kinds[1] == "ValueError" and kinds[2] == "system_exit" and kinds[3] == "invalid_episode"
    assert all(type(row["started_at"]) is float and row["duration_s"] >= 0 for row in rows)
    spanned = [row for row in rows if row["replicate"] % 9 == 8]
    step = '[{{"name":"step","kind":"step","attributes":{{"i":{}}}}}]'
    assert spanned and all(row["spans"] == step.format(row["replicate"]) for row in spanned)


def test_the_rounds_hold_row_tuples_and_the_rows_as_dicts(agent: str) -> None:
    job = Job(run_id="run-2", target=f"{agent}:rollout", spec_dir=".", outcomes=("ok", "fail"))
    tasks = [task for task in _tasks(36) if task.replicate % 9 == 0]
    rounds = list(PoolExecutor({"concurrency": 4}).execute_rounds(job, iter(tasks)))
    rows = [row for batch in rounds for row in batch]
    assert rows and all(type(row) is tuple for row in rows)
    assert sorted(row[2] for row in rows) == [task.replicate for task in tasks]  # ROW_FIELDS order


SWITCH_AGENT = """
import sys, time
from poisson_prove import Episode

SEEN = []

def rollout(cfg, seed):
    SEEN.append(sys.getswitchinterval())
    time.sleep(0.001)
    return Episode("ok", 1, 2)

async def arollout(cfg, seed):
    SEEN.append(sys.getswitchinterval())
    return Episode("ok", 1, 2)
"""


def test_many_threads_raise_the_switch_interval_while_they_run(tmp_path: Path) -> None:
    module = f"switch_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(SWITCH_AGENT)
    before = sys.getswitchinterval()
    try:
        seen = {}
        for target, concurrency in (("rollout", 400), ("rollout", 16), ("arollout", 400)):
            job = Job(run_id="r", target=f"{module}:{target}", spec_dir=str(tmp_path), outcomes=("ok",))
            tasks = [Task("c", {}, r, r) for r in range(concurrency)]
            rows = list(PoolExecutor({"concurrency": concurrency}).execute(job, iter(tasks)))
            assert len(rows) == concurrency and all(row["outcome"] == "ok" for row in rows)
            agent = sys.modules[module]
            seen[target, concurrency] = {round(value, 9) for value in agent.SEEN}
            agent.SEEN.clear()
            assert sys.getswitchinterval() == before  # given back once the sweep's episodes end
        assert seen["rollout", 400] == {0.02}  # 50 us a thread
        assert seen["rollout", 16] == {round(before, 9)}  # a few threads: the interval as it was
        assert seen["arollout", 400] == {round(before, 9)}  # one event loop: nothing to change
    finally:
        sys.modules.pop(module, None)
        sys.setswitchinterval(before)
