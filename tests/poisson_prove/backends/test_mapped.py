"""backends/_mapped.py: rows streamed out of a provider's parallel map. The "provider" here is
an in-process map calling the workers' real entry point (`run_task`) on the fleet agent, which
loses calls the way a lost container does (an exception in place of the result): every planned
task leaves exactly once, lost ones go round again, and after the last round they are stored as
infrastructure rows."""

from __future__ import annotations

import shutil
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from poisson_prove.backends._attempt import INFRASTRUCTURE, run_task
from poisson_prove.backends._mapped import stream_mapped
from poisson_prove.backends._schedule import RetryPolicy
from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import episode_seed
from poisson_prove.episode.run import Job, Task
from tests.poisson_prove.backends.conftest import HERE, SALT
from tests.poisson_prove.backends.fleet_agent import _episode

POLICY = RetryPolicy(infra_errors=("Throttled",), retries=1, backoff_s=0.0, worker_retries=2)


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Job]:
    module = f"fleet_{uuid.uuid4().hex[:8]}"
    shutil.copy(HERE / "fleet_agent.py", tmp_path / f"{module}.py")
    yield Job(
        run_id="r", target=f"{module}:rollout", spec_dir=str(tmp_path), outcomes=("ok", "fail"),
        infra_errors=POLICY.infra_errors,
    )
    sys.modules.pop(module, None)


def tasks(n: int = 6) -> list[Task]:
    out = []
    for p in (0.2, 0.6):
        key = condition_key({"p": p})
        out += [Task(key, {"p": p}, r, episode_seed(SALT, key, r)) for r in range(n // 2)]
    return out


class Provider:
    """A parallel map over `run_task`, recording what each round was handed. `lose(task,
    round)` says which calls come back as an exception instead of a result."""

    def __init__(self, job: Job, lose: Callable[[Task, int], bool] = lambda task, n: False) -> None:
        self.job = job
        self.lose = lose
        self.rounds: list[list[tuple[str, int]]] = []

    def __call__(self, handed: Iterable[Task]) -> Iterator[Any]:
        self.rounds.append([])
        number = len(self.rounds)
        for task in handed:
            self.rounds[-1].append((task.condition, task.replicate))
            if self.lose(task, number):
                yield ConnectionError(f"container for replicate {task.replicate} lost\nstack")
            else:
                yield run_task(task, self.job, POLICY.retries, POLICY.backoff_s)


def keys(rows: Iterable[dict[str, Any]]) -> list[tuple[str, int]]:
    return sorted((row["cell"], row["replicate"]) for row in rows)


def test_every_task_leaves_once_with_the_row_its_worker_built(job: Job) -> None:
    provider = Provider(job)
    planned = tasks()
    rows = list(stream_mapped(provider, job, iter(planned), POLICY))
    assert keys(rows) == keys({"cell": t.condition, "replicate": t.replicate} for t in planned)
    assert len(provider.rounds) == 1
    for row in rows:
        episode = _episode({"p": 0.2 if "0.2" in row["cell"] else 0.6}, row["seed"])
        assert (row["outcome"], row["t"], row["error_kind"]) == (episode.outcome, episode.t, None)


def test_calls_lost_with_their_container_go_round_again(job: Job) -> None:
    planned = tasks()
    lost = {(planned[1].condition, 1), (planned[4].condition, planned[4].replicate)}
    provider = Provider(job, lambda task, n: n == 1 and (task.condition, task.replicate) in lost)
    rows = list(stream_mapped(provider, job, iter(planned), POLICY))
    assert keys(rows) == sorted((t.condition, t.replicate) for t in planned)
    assert all(row["error_kind"] is None for row in rows)
    assert len(provider.rounds[0]) == 6 and sorted(provider.rounds[1]) == sorted(lost)
    assert len(provider.rounds) == 2


def test_a_call_lost_every_round_is_stored_as_infrastructure_after_the_last(job: Job) -> None:
    planned = tasks()
    doomed = planned[2]
    provider = Provider(job, lambda task, n: task == doomed)
    rows = list(stream_mapped(provider, job, iter(planned), POLICY))
    assert len(provider.rounds) == POLICY.worker_retries + 1
    assert provider.rounds[1:] == [[(doomed.condition, doomed.replicate)]] * POLICY.worker_retries
    assert keys(rows) == sorted((t.condition, t.replicate) for t in planned)
    doomed_key = (doomed.condition, doomed.replicate)
    (stored,) = [row for row in rows if (row["cell"], row["replicate"]) == doomed_key]
    assert (stored["outcome"], stored["error_kind"]) == (None, INFRASTRUCTURE)
    assert stored["error_message"] == (
        f"no result after 3 rounds: ConnectionError: container for replicate {doomed.replicate} lost"
    )
    assert stored["seed"] == doomed.seed


def test_a_map_that_returns_nothing_stores_every_task_as_infrastructure(job: Job) -> None:
    def silent(handed: Iterable[Task]) -> Iterator[Any]:
        list(handed)  # the provider took the calls, and nothing came back
        return iter(())

    rows = list(stream_mapped(silent, job, iter(tasks(4)), replace(POLICY, worker_retries=0)))
    assert len(rows) == 4
    assert {row["error_message"] for row in rows} == {
        "no result after 1 rounds: the provider returned no result"
    }


def test_named_infrastructure_errors_after_their_retries_are_infrastructure_rows(job: Job) -> None:
    troubled = replace(job, target=job.target.replace(":rollout", ":troubled"))
    rows = list(stream_mapped(Provider(troubled), troubled, iter(tasks()), POLICY))
    throttled = [row for row in rows if row["cell"] == condition_key({"p": 0.2})]
    bugs = [row for row in rows if row["cell"] == condition_key({"p": 0.6})]
    assert len(throttled) == len(bugs) == 3
    assert {(row["error_kind"], row["error_message"]) for row in throttled} == {
        (INFRASTRUCTURE, "Throttled: quota exhausted (after 1 retry)")
    }
    assert {row["error_kind"] for row in bugs} == {"ValueError"}  # the agent's own: stored as its failure


def test_a_duplicate_delivery_and_a_plain_tuple_are_one_row_each(job: Job) -> None:
    provider = Provider(job)

    def twice(handed: Iterable[Task]) -> Iterator[Any]:
        for attempt in provider(handed):
            yield tuple(attempt)  # an Attempt unpickled as a plain tuple
            yield attempt  # delivered again

    planned = tasks()
    rows = list(stream_mapped(twice, job, iter(planned), POLICY))
    assert keys(rows) == sorted((t.condition, t.replicate) for t in planned)
