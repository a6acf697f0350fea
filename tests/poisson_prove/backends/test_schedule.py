"""The scheduling loop's rules, in process: AIMD backoff of the window, every episode landing
through a storm of rate limits, lost workers resubmitted and, past their retries, stored."""

from __future__ import annotations

import shutil
import sys
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from poisson_prove.backends import make_executor
from poisson_prove.backends._attempt import Attempt
from poisson_prove.backends._schedule import RetryPolicy, Window, WorkerLost, drive, drive_rounds
from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import episode_seed
from poisson_prove.episode.run import Job, Task, episode_row
from tests.poisson_prove.backends.conftest import HERE, SALT


def test_window_halves_on_infra_errors_and_grows_back_one_by_one() -> None:
    window = Window(8)
    window.on_infra_error()
    assert window.size == 4
    window.on_infra_error()
    window.on_infra_error()
    window.on_infra_error()
    assert window.size == 1 and window.smallest == 1  # never below one in flight
    for expected in (2, 3, 4, 5, 6, 7, 8, 8):
        window.on_success()
        assert window.size == expected  # back up to the ceiling the user asked for, no further


def test_a_storm_of_rate_limits_shrinks_the_pool_and_every_episode_still_lands(tmp_path: Path) -> None:
    module = f"fleet_{uuid.uuid4().hex[:8]}"
    shutil.copy(HERE / "fleet_agent.py", tmp_path / f"{module}.py")
    job = Job(run_id="r", target=f"{module}:flaky", spec_dir=str(tmp_path), outcomes=("ok", "fail"))
    tasks = [
        Task(condition_key({"p": p}), {"p": p}, r, episode_seed(SALT, condition_key({"p": p}), r))
        for p in (0.2, 0.6)
        for r in range(8)
    ]
    settings = {
        "concurrency": 8,
        "infra_errors": ["RateLimitError"],
        "infra_retries": 2,
        "infra_backoff": 0.001,
    }
    stormy, calm = make_executor("local", settings), make_executor("local", settings)
    try:
        rows = list(stormy.execute(job, iter(tasks)))
        calm_rows = list(calm.execute(replace(job, target=f"{module}:rollout"), iter(tasks)))
    finally:
        sys.modules.pop(module, None)
    planned = sorted((t.condition, t.replicate) for t in tasks)
    assert sorted((r["cell"], r["replicate"]) for r in rows) == planned
    assert sorted((r["cell"], r["replicate"]) for r in calm_rows) == planned
    assert all(r["error_kind"] is None for r in rows + calm_rows)
    assert stormy.window.smallest == 1  # halved 8 -> 4 -> 2 -> 1 while the errors came
    assert calm.window.smallest == 8  # without infrastructure errors it never shrinks


class _LosingEngine:
    """An engine whose workers are lost on the first `losses[replicate]` attempts of each task,
    answering at once from the caller's thread."""

    def __init__(self, job: Job, losses: dict[int, int]) -> None:
        self.job = job
        self.losses = dict(losses)
        self.submitted: list[int] = []

    def submit(self, task: Task, done: Any) -> Task:
        self.submitted.append(task.replicate)
        done()
        return task

    def outcome(self, task: Task) -> Attempt:
        if self.losses.get(task.replicate, 0) > 0:
            self.losses[task.replicate] -= 1
            raise WorkerLost("preempted")
        return Attempt(episode_row(self.job, task, outcome="ok", t=1.0, horizon=2.0))

    def cancel(self, handles: list[Any]) -> None:
        pass


def test_a_lost_worker_is_resubmitted_and_too_many_losses_store_an_infrastructure_row() -> None:
    job = Job(run_id="r", target="m:f", spec_dir=".", outcomes=("ok",))
    tasks = [Task("c", {}, r, r) for r in range(5)]
    engine = _LosingEngine(job, {1: 2, 3: 5})  # 1 is lost twice (answers on its third try), 3 always
    policy = RetryPolicy(worker_retries=3)
    rounds = list(drive_rounds(engine, job, iter(tasks), Window(2), policy))
    rows = {row["replicate"]: row for batch in rounds for row in batch}
    assert sorted(rows) == [0, 1, 2, 3, 4]  # each task leaves exactly once
    assert all(rows[r]["outcome"] == "ok" for r in (0, 1, 2, 4))
    assert rows[3]["outcome"] is None and rows[3]["error_kind"] == "infrastructure"
    assert rows[3]["error_message"] == "worker lost 4 times: preempted"
    assert engine.submitted.count(1) == 3 and engine.submitted.count(3) == 4
    flat = list(drive(_LosingEngine(job, {0: 1}), job, iter(tasks), Window(2), policy))
    assert sorted(row["replicate"] for row in flat) == [0, 1, 2, 3, 4]  # `drive`: the same rows, one by one
