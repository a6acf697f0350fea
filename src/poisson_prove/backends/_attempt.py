"""One attempt at one episode, as every backend's worker runs it.

The row itself is built by `poisson_prove.episode.run.run_episode` (call, catch, time, validate);
this module adds what concurrency and remote workers need around it: the rollout loaded once
per process, infrastructure errors told apart from the agent's own failures, async rollouts
awaited on a caller's event loop, and rows for episodes that never returned (timed out,
worker lost, retries exhausted). Everything here is importable by name, so Dask, Ray, Modal
and Burla workers can unpickle it.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import replace
from typing import Any, NamedTuple

import poisson_prove.episode.run as execute
from poisson_prove.episode.recording import begin_episode, current_spans, end_episode
from poisson_prove.episode.run import Job, Task
from poisson_prove.episode.target import load_target

# error_kind of a row whose episode never produced an outcome because of the infrastructure
# (named infra errors after the last retry, a worker lost too often): never the agent's failure.
INFRASTRUCTURE = "infrastructure"

Rollout = Callable[[dict[str, Any], int], Any]


class Attempt(NamedTuple):
    """What a worker sends back: the row, and the infrastructure error that spoilt it, if any.

    The row is a row dict, except on the local pool's threads, whose clean rows are row tuples
    (episode.row.ROW_FIELDS order) until PoolExecutor.execute makes them dicts."""

    row: dict[str, Any]
    infra: str | None = None  # "TypeName: message" when a named infrastructure error was raised


def exception_names(exc: BaseException) -> set[str]:
    """The names an exception answers to: each class of its MRO, bare and module-qualified."""
    names: set[str] = set()
    for cls in type(exc).__mro__:
        names.add(cls.__name__)
        names.add(f"{cls.__module__}.{cls.__qualname__}")
    return names


def is_infra_error(exc: BaseException, infra_errors: Sequence[str]) -> bool:
    """True when `exc` is (a subclass of) one of the named types: "RateLimitError" matches
    any class of that name, "mypkg.errors.Throttled" only that module's class."""
    return bool(infra_errors) and not exception_names(exc).isdisjoint(infra_errors)


def describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _execute_module() -> Any:
    return execute


def row_job(job: Job) -> Job:
    """The job run_episode sees inside a worker: the worker enforces the timeout itself."""
    return replace(job, episode_timeout=None) if job.episode_timeout is not None else job


def attempt_with(rollout: Rollout, job: Job, task: Task) -> Attempt:
    """Run one attempt through run_episode, noting whether a named infrastructure error ended it."""
    seen: list[BaseException] = []

    def guarded(cfg: dict[str, Any], seed: int) -> Any:
        try:
            return rollout(cfg, seed)
        except BaseException as exc:
            if is_infra_error(exc, job.infra_errors):
                seen.append(exc)
            raise

    row = _execute_module().run_episode(guarded, row_job(job), task)
    return Attempt(row, describe(seen[-1]) if seen else None)


async def async_attempt(rollout: Callable[..., Any], job: Job, task: Task) -> Attempt:
    """Await an `async def rollout` on the running loop, then build its row with run_episode.

    The result (or exception) is replayed through run_episode so validation and row layout stay
    in one place; started_at and duration_s are the awaited call's own.
    """
    started = time.time()
    clock = time.perf_counter()
    result: Any = None
    error: BaseException | None = None
    spans, token = begin_episode()  # the awaited call's own steps, spans and faults
    try:
        with job.scope(task.cfg, task.seed) if job.scope else nullcontext():
            result = await rollout(dict(task.cfg), task.seed)
    except Exception as exc:  # the agent's failure (or a named infra error): stored, not raised
        error = exc
    except SystemExit as exc:  # run_episode turns it into a `system_exit` row, as in sync rollouts
        error = exc
    finally:
        end_episode(token)
    duration = time.perf_counter() - clock

    def replay(cfg: dict[str, Any], seed: int) -> Any:
        episode_spans = current_spans()
        if episode_spans is not None:
            episode_spans.extend(spans)
        if error is not None:
            raise error
        return result

    attempt = attempt_with(replay, job, task)
    attempt.row["started_at"] = started
    attempt.row["duration_s"] = duration
    return attempt


def synthetic_row(
    job: Job, task: Task, *, error_kind: str, message: str, started: float | None = None
) -> dict[str, Any]:
    """A row with no outcome for an episode that never returned (worker lost, retries spent);
    `started` is epoch seconds, as run_episode stores it."""
    row = _execute_module().timeout_row(job, task, 0.0, time.time() if started is None else started)
    row["error_kind"] = error_kind
    row["error_message"] = message
    return row


def infrastructure_row(attempt: Attempt, retries: int) -> dict[str, Any]:
    """The row stored after the last retry of an infrastructure error: no outcome, kind
    `infrastructure`, never counted as the agent's failure."""
    row = dict(attempt.row)
    row["outcome"] = None
    row["error_kind"] = INFRASTRUCTURE
    suffix = f" (after {retries} {'retry' if retries == 1 else 'retries'})"
    row["error_message"] = f"{attempt.infra}{suffix}"
    return row


# Worker processes load the rollout once per (target, spec_dir), not once per episode.
_ROLLOUTS: dict[tuple[str, str], Callable[..., Any]] = {}


def load_rollout(job: Job) -> Callable[..., Any]:
    key = (job.target, job.spec_dir)
    if key not in _ROLLOUTS:
        _ROLLOUTS[key] = load_target(job)
    return _ROLLOUTS[key]


def is_async(rollout: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(rollout)


def _attempt_here(job: Job, task: Task) -> Attempt:
    rollout = load_rollout(job)
    if is_async(rollout):
        import asyncio  # asyncio (and ssl): ~30 ms, only for an `async def` rollout

        return asyncio.run(async_attempt(rollout, job, task))
    return attempt_with(rollout, job, task)


def run_attempt(job: Job, task: Task) -> Attempt:
    """A remote worker's entry point: one attempt at one episode (async rollouts included).

    Under an episode timeout the attempt runs in a thread of its own; past the limit its row
    says `episode_timeout` and its result is discarded. A worker's thread cannot be killed, so
    it runs on until the rollout returns (locally, processes mode kills instead).
    """
    if job.episode_timeout is None:
        return _attempt_here(job, task)
    outcome: list[Attempt] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(_attempt_here(job, task))
        except BaseException as exc:  # re-raised below, in the worker's own thread
            failure.append(exc)

    started = time.time()
    runner = threading.Thread(target=work, name="prove-timed-episode", daemon=True)
    runner.start()
    runner.join(job.episode_timeout)
    if failure:
        raise failure[0]
    if outcome:
        return outcome[0]
    return Attempt(_execute_module().timeout_row(job, task, float(job.episode_timeout), started))


def run_with_retries(job: Job, task: Task, retries: int, backoff_s: float) -> Attempt:
    """Retry named infrastructure errors in place with exponential backoff (Modal, Burla:
    where the worker, not the sweep, holds the task). The last attempt is returned as is."""
    attempt = run_attempt(job, task)
    for n in range(retries):
        if attempt.infra is None:
            return attempt
        time.sleep(backoff_delay(backoff_s, n))
        attempt = run_attempt(job, task)
    return attempt


MAX_BACKOFF_S = 30.0


def backoff_delay(base_s: float, retry_index: int) -> float:
    """Seconds before retry number `retry_index` (0-based): base x 2^k, capped at 30 s."""
    return min(MAX_BACKOFF_S, base_s * (2.0**retry_index))


def run_task(task: Task, job: Job, retries: int, backoff_s: float) -> Attempt:
    """The remote entry point of mapped backends (Modal, Burla): the task comes first, the way
    their maps hand out inputs."""
    return run_with_retries(job, task, retries, backoff_s)
