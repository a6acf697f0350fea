"""Streaming rows out of a provider's parallel map (Modal's Function.map, Burla's
remote_parallel_map), where the provider, not Prove, schedules the calls.

The remote call is `run_task(task, job, retries, backoff_s)`: it retries named infrastructure
errors in place and returns an Attempt. A call that comes back as an exception (a container
lost, preempted, out of memory) carries no task identity, so every task handed to the map is
tracked until its row arrives; tasks still missing when the map ends go round again, up to
`worker_retries` rounds, and after that are stored with no outcome as `infrastructure` rows.
Each planned task leaves exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from poisson_prove.backends._attempt import (
    INFRASTRUCTURE,
    Attempt,
    describe,
    infrastructure_row,
    synthetic_row,
)
from poisson_prove.backends._schedule import RetryPolicy
from poisson_prove.episode.run import Job, Task

MapCall = Callable[[Iterable[Task]], Iterable[Any]]


def _key(condition: str, replicate: int) -> tuple[str, int]:
    return (condition, int(replicate))


def stream_mapped(
    call_map: MapCall, job: Job, tasks: Iterator[Task], policy: RetryPolicy
) -> Iterator[dict[str, Any]]:
    """Yield one row per task from `call_map(tasks) -> results` (Attempts or exceptions)."""
    pending: dict[tuple[str, int], Task] = {}
    last_error: dict[str, str] = {}

    def tracked(source: Iterable[Task]) -> Iterator[Task]:
        for task in source:
            pending[_key(task.condition, task.replicate)] = task
            yield task

    source: Iterable[Task] = tasks
    for round_number in range(policy.worker_retries + 1):
        for result in call_map(tracked(source)):
            if isinstance(result, BaseException):
                last_error["text"] = describe(result)
                continue
            attempt = result if isinstance(result, Attempt) else Attempt(*result)
            task = pending.pop(_key(attempt.row["cell"], attempt.row["replicate"]), None)
            if task is None:
                continue  # a duplicate delivery of an episode already yielded
            if attempt.infra is not None:
                yield infrastructure_row(attempt, policy.retries)
            else:
                yield attempt.row
        if not pending:
            return
        if round_number < policy.worker_retries:
            source = list(pending.values())  # the calls lost this round go round again
    message = last_error.get("text", "the provider returned no result")
    for task in list(pending.values()):
        pending.pop(_key(task.condition, task.replicate))
        yield synthetic_row(
            job,
            task,
            error_kind=INFRASTRUCTURE,
            message=f"no result after {policy.worker_retries + 1} rounds: {message}",
        )
