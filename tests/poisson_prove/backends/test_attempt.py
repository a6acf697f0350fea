"""backends/_attempt.py: one attempt at one episode as every backend's worker runs it, against
real rollouts imported from a module on disk: infrastructure errors told apart from the agent's
own, async rollouts awaited, retries in place, and the rows of episodes that never returned."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from poisson_prove.backends._attempt import (
    INFRASTRUCTURE,
    MAX_BACKOFF_S,
    Attempt,
    async_attempt,
    attempt_with,
    backoff_delay,
    describe,
    exception_names,
    infrastructure_row,
    is_infra_error,
    load_rollout,
    row_job,
    run_attempt,
    run_task,
    run_with_retries,
    synthetic_row,
)
from poisson_prove.episode.run import Job, Task

AGENT = '''
import asyncio
import threading

from poisson_prove import Episode, step

RELEASE = threading.Event()
ATTEMPTS = {}


class RateLimitError(Exception):
    pass


class SlowDown(RateLimitError):
    pass


def ok(cfg, seed):
    return Episode("ok", 2, 5, {"case_id": cfg["case"]})


def throttled(cfg, seed):
    raise RateLimitError("429 Too Many Requests\\nretry after 1 s")


def slowed(cfg, seed):
    raise SlowDown("")


def own_bug(cfg, seed):
    raise ValueError("the agent's own bug")


def flaky(cfg, seed):
    ATTEMPTS[seed] = ATTEMPTS.get(seed, 0) + 1
    if ATTEMPTS[seed] <= 2:
        raise RateLimitError("429")
    return Episode("ok", 1, 5, {"case_id": cfg["case"]})


def blocked(cfg, seed):
    RELEASE.wait(60)
    return Episode("ok", 1, 5, {"case_id": cfg["case"]})


async def aok(cfg, seed):
    with step("think", depth=1):
        await asyncio.sleep(0)
    return Episode("bad", 3, 5, {"case_id": cfg["case"]})


async def athrottled(cfg, seed):
    await asyncio.sleep(0)
    raise RateLimitError("429 from the async client")
'''

TASK = Task(condition='{"case":"refund"}', cfg={"case": "refund"}, replicate=0, seed=7)


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[tuple[str, Job]]:
    """The agent module written to disk under a fresh name, and a job whose target is in it."""
    module = f"attempt_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    job = Job(
        run_id="run-1", target=f"{module}:ok", spec_dir=str(tmp_path), outcomes=("ok", "bad"),
        infra_errors=("RateLimitError",),
    )
    yield module, job
    loaded = sys.modules.pop(module, None)
    if loaded is not None:
        loaded.RELEASE.set()  # a blocked rollout left running in its thread returns now


def target(agent: tuple[str, Job], function: str, **changes: object) -> Job:
    module, job = agent
    return replace(job, target=f"{module}:{function}", **changes)


def test_an_exception_answers_to_each_class_of_its_mro_bare_and_qualified() -> None:
    class Throttled(ConnectionError):
        pass

    names = exception_names(Throttled("x"))
    assert {"Throttled", f"{__name__}.{Throttled.__qualname__}", "ConnectionError", "OSError"} <= names
    assert {"builtins.ConnectionError", "Exception", "builtins.BaseException"} <= names
    assert is_infra_error(Throttled("x"), ["ConnectionError"])  # a subclass of a named type
    assert is_infra_error(Throttled("x"), [f"{__name__}.{Throttled.__qualname__}"])
    assert not is_infra_error(Throttled("x"), ["other.module.Throttled"])  # qualified: that module's only
    assert not is_infra_error(Throttled("x"), [])  # nothing named: nothing is infrastructure


def test_an_error_is_described_by_its_type_and_first_line() -> None:
    assert describe(RuntimeError("the tool API returned 503\ntraceback follows")) == (
        "RuntimeError: the tool API returned 503"
    )
    assert describe(TimeoutError()) == "TimeoutError"
    assert describe(ValueError("   ")) == "ValueError"


def test_an_attempt_notes_a_named_infrastructure_error_and_stores_every_error_as_a_row(agent) -> None:
    good = attempt_with(load_rollout(agent[1]), agent[1], TASK)
    assert good.infra is None
    assert (good.row["outcome"], good.row["t"], good.row["case_id"], good.row["error_kind"]) == (
        "ok", 2, "refund", None,
    )
    assert (good.row["run_id"], good.row["cell"], good.row["replicate"], good.row["seed"]) == (
        "run-1", TASK.condition, 0, 7,
    )
    for function, infra in [
        ("throttled", "RateLimitError: 429 Too Many Requests"),
        ("slowed", "SlowDown"),  # a subclass of a named type is named too
        ("own_bug", None),  # the agent's own failure is never infrastructure
    ]:
        job = target(agent, function)
        attempt = attempt_with(load_rollout(job), job, TASK)
        assert attempt.infra == infra, function
        assert attempt.row["outcome"] is None and attempt.row["error_kind"] is not None, function
    assert attempt.row["error_kind"] == "ValueError"
    assert attempt.row["error_message"] == "the agent's own bug"


def test_a_worker_loads_each_rollout_once(agent) -> None:
    first = load_rollout(agent[1])
    assert load_rollout(replace(agent[1], run_id="another-run")) is first
    assert load_rollout(target(agent, "own_bug")) is not first


def test_an_async_rollout_is_awaited_and_keeps_its_spans(agent) -> None:
    job = target(agent, "aok")
    attempt = asyncio.run(async_attempt(load_rollout(job), job, TASK))
    assert attempt.infra is None and attempt.row["outcome"] == "bad"
    spans = json.loads(attempt.row["spans"])
    assert [(s["name"], s["attributes"]) for s in spans] == [("think", {"depth": 1})]
    assert attempt.row["started_at"] > 0 and attempt.row["duration_s"] >= 0
    # the same through the workers' entry point, which runs its own event loop
    assert run_attempt(job, TASK).row["outcome"] == "bad"
    throttled = target(agent, "athrottled")
    attempt = run_attempt(throttled, TASK)
    assert attempt.infra == "RateLimitError: 429 from the async client"
    assert attempt.row["error_kind"] == "RateLimitError"


def test_under_a_timeout_an_episode_past_it_is_a_timeout_row(agent) -> None:
    quick = run_attempt(target(agent, "ok", episode_timeout=60.0), TASK)
    assert quick.row["outcome"] == "ok" and quick.row["error_kind"] is None
    stuck = run_attempt(target(agent, "blocked", episode_timeout=0.2), TASK)
    assert stuck.infra is None and stuck.row["outcome"] is None
    assert stuck.row["error_kind"] == "episode_timeout"
    assert stuck.row["error_message"] == "the episode ran past --episode-timeout 0.2 s and was stopped"
    # inside the worker run_episode never sees the timeout: the worker enforces it
    assert row_job(target(agent, "ok", episode_timeout=3.0)).episode_timeout is None
    assert row_job(agent[1]) is agent[1]


def test_named_errors_are_retried_in_place_and_the_last_attempt_is_returned_as_is(agent) -> None:
    job = target(agent, "flaky")
    answered = run_with_retries(job, TASK, retries=2, backoff_s=0.0)
    assert answered.infra is None and answered.row["outcome"] == "ok"  # attempts 1 and 2 throttled
    spent = run_task(replace(TASK, seed=8), job, 1, 0.0)  # the mapped backends' argument order
    assert spent.infra == "RateLimitError: 429" and spent.row["outcome"] is None
    stored = infrastructure_row(spent, 1)
    assert (stored["outcome"], stored["error_kind"]) == (None, INFRASTRUCTURE)
    assert stored["error_message"] == "RateLimitError: 429 (after 1 retry)"
    assert infrastructure_row(spent, 3)["error_message"] == "RateLimitError: 429 (after 3 retries)"
    assert spent.row["error_kind"] == "RateLimitError"  # the attempt's own row is left as it was
    not_named = run_with_retries(target(agent, "own_bug"), TASK, retries=5, backoff_s=0.0)
    assert not_named.infra is None and not_named.row["error_kind"] == "ValueError"


def test_the_backoff_doubles_from_its_base_and_stops_at_30_seconds() -> None:
    assert [backoff_delay(1.0, k) for k in range(7)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert backoff_delay(0.25, 3) == 2.0
    assert backoff_delay(0.0, 10) == 0.0
    assert MAX_BACKOFF_S == 30.0


def test_an_episode_that_never_returned_has_a_row_without_an_outcome(agent) -> None:
    started = 1700000000.0
    row = synthetic_row(agent[1], TASK, error_kind=INFRASTRUCTURE, message="worker lost", started=started)
    assert (row["outcome"], row["error_kind"], row["error_message"]) == (None, INFRASTRUCTURE, "worker lost")
    assert (row["cell"], row["replicate"], row["seed"], row["started_at"]) == (TASK.condition, 0, 7, started)
    assert isinstance(synthetic_row(agent[1], TASK, error_kind="x", message="y")["started_at"], float)
    assert Attempt(row).infra is None
