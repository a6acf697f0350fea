"""The scheduling loop every windowed backend shares (threads, asyncio, processes, Dask, Ray).

A backend is an `Engine`: it submits one attempt and calls back when it is done. `drive` keeps
at most `window` attempts in flight, streams finished rows out as they complete, retries named
infrastructure errors with exponential backoff, resubmits attempts whose worker was lost, and
on close (the sweep stopped, Ctrl-C, an exception) cancels whatever is still in flight.

Each planned task leaves `drive` exactly once, as one row: a retried attempt replaces the
spoilt one, it is never yielded beside it.

The loop runs in a thread of its own and hands rows over through a queue, so that while the
sweep writes a batch to the store the window keeps being refilled; closing the generator stops
that thread, which cancels what is in flight before `drive` returns.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from poisson_prove.backends._attempt import (
    INFRASTRUCTURE,
    Attempt,
    backoff_delay,
    infrastructure_row,
    synthetic_row,
)
from poisson_prove.episode.run import Job, Task


class WorkerLost(Exception):
    """The attempt's worker died (killed, out of memory, preempted): the attempt is resubmitted."""


@dataclass(frozen=True)
class RetryPolicy:
    """How infrastructure trouble is retried."""

    infra_errors: tuple[str, ...] = ()
    retries: int = 3  # retries of a named infrastructure error, per episode
    backoff_s: float = 1.0  # first delay; doubles per retry, capped at 30 s
    worker_retries: int = 3  # resubmissions of an episode whose worker was lost


class Engine(Protocol):
    def submit(self, task: Task, done: Callable[[], None]) -> Any:
        """Start one attempt; call `done()` (from any thread) when it has finished."""

    def outcome(self, handle: Any) -> Attempt:
        """The finished attempt; raises WorkerLost when its worker was lost."""

    def cancel(self, handles: list[Any]) -> None:
        """Stop these attempts now (best effort) and release them."""


def _prefetch(engine: Engine, handles: list[Any]) -> None:
    """Let an engine fetch many finished results in one round trip (Dask, Ray), if it can."""
    fetch = getattr(engine, "prefetch", None)
    if fetch is not None and len(handles) > 1:
        fetch(handles)


class Window:
    """Additive-increase, multiplicative-decrease limit on attempts in flight.

    Halves on an infrastructure error (so a rate-limited API sees less pressure), grows by one
    per clean episode back up to the ceiling the user asked for.
    """

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self.size = self.ceiling
        self.smallest = self.ceiling  # the lowest it went, for reporting and tests

    def on_infra_error(self) -> None:
        self.size = max(1, self.size // 2)
        self.smallest = min(self.smallest, self.size)

    def on_success(self) -> None:
        self.size = min(self.ceiling, self.size + 1)


@dataclass(slots=True)
class _InFlight:
    task: Task
    infra_retries_used: int
    workers_lost: int
    handle: Any = None


_WAKE = -1  # a token no attempt has: wakes the loop so it sees it was told to stop
_STOP_WAIT_S = 30.0  # how long closing waits for the loop to cancel what is in flight


def drive(
    engine: Engine,
    job: Job,
    tasks: Iterator[Task],
    window: Window,
    policy: RetryPolicy,
) -> Generator[dict[str, Any], None, None]:
    """Yield one row per task, in completion order; on close, cancel what is in flight."""
    rounds = drive_rounds(engine, job, tasks, window, policy)
    try:
        for rows in rounds:
            yield from rows
    finally:
        rounds.close()


def drive_rounds(
    engine: Engine,
    job: Job,
    tasks: Iterator[Task],
    window: Window,
    policy: RetryPolicy,
) -> Generator[list[Any], None, None]:
    """`drive`, the rows settled in one round of the loop at a time (each row as the engine's
    attempt holds it: a row dict, or the local threads' row tuple)."""
    handed: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    finished: queue.SimpleQueue[int] = queue.SimpleQueue()
    stop = threading.Event()

    def pump() -> None:
        rows = _loop(engine, job, tasks, window, policy, finished, stop)
        try:
            for settled in rows:  # every row settled in one round, handed over at once
                handed.put(("rows", settled))
            handed.put(("end", None))
        except BaseException as exc:  # re-raised in the sweep's thread
            handed.put(("error", exc))
        finally:
            rows.close()

    thread = threading.Thread(target=pump, name="prove-scheduler", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = handed.get()
            if kind == "rows":
                yield value
            elif kind == "end":
                return
            else:
                raise value
    finally:
        stop.set()
        finished.put(_WAKE)
        thread.join(timeout=_STOP_WAIT_S)


def _loop(
    engine: Engine,
    job: Job,
    tasks: Iterator[Task],
    window: Window,
    policy: RetryPolicy,
    finished: queue.SimpleQueue[int],
    stop: threading.Event,
) -> Generator[list[Any], None, None]:
    """The rows of each round of finished attempts, as one list per round."""
    in_flight: dict[int, _InFlight] = {}
    # An engine whose workers take their next attempt from a queue of their own (the local
    # threads) gets that many more queued while the window is whole: a worker that finishes
    # starts the next episode at once, without waiting for this loop to run. Never while
    # backing off, so a halved window is what the API sees.
    ahead = int(getattr(engine, "ahead", 0))
    # (ready at, tie-break, entry): attempts waiting out their backoff before resubmission
    delayed: list[tuple[float, int, _InFlight]] = []
    tokens = itertools.count()
    exhausted = False

    def submit(entry: _InFlight) -> None:
        token = next(tokens)
        in_flight[token] = entry
        entry.handle = engine.submit(entry.task, functools.partial(finished.put, token))

    try:
        while not stop.is_set():
            now = time.monotonic()
            limit = window.size + (ahead if window.size >= window.ceiling else 0)
            while len(in_flight) < limit:
                if delayed and delayed[0][0] <= now:
                    submit(heapq.heappop(delayed)[2])
                elif not exhausted:
                    task = next(tasks, None)
                    if task is None:
                        exhausted = True
                    else:
                        submit(_InFlight(task, 0, 0))
                else:
                    break
            if not in_flight and not delayed and exhausted:
                return
            wait = max(0.0, delayed[0][0] - now) if delayed else None
            if in_flight and wait is None:
                ready = [finished.get()]
            else:
                try:
                    ready = [finished.get(timeout=wait)]
                except queue.Empty:
                    continue  # a backoff ran out: loop round to resubmit it
            while True:  # everything else already finished, to collect in one go
                try:
                    ready.append(finished.get_nowait())
                except queue.Empty:
                    break
            if stop.is_set():
                return
            # A token can come twice (an engine calling back again for a recomputed result):
            # its attempt was settled the first time.
            entries = [in_flight.pop(token) for token in ready if token in in_flight]
            _prefetch(engine, [entry.handle for entry in entries])
            settled: list[Any] = []
            outcome = engine.outcome
            for entry in entries:
                try:
                    attempt = outcome(entry.handle)
                except WorkerLost as lost:
                    row = _lost(job, entry, lost, policy, submit)
                else:
                    if attempt.infra is None:  # the common case, here rather than in _settle
                        window.on_success()
                        settled.append(attempt.row)
                        continue
                    row = _settle(attempt, entry, window, policy, delayed, tokens)
                if row is not None:
                    settled.append(row)
            if settled:
                yield settled
    finally:
        handles = [entry.handle for entry in in_flight.values() if entry.handle is not None]
        in_flight.clear()
        engine.cancel(handles)


def _lost(
    job: Job, entry: _InFlight, lost: WorkerLost, policy: RetryPolicy, submit: Callable[[_InFlight], None]
) -> dict[str, Any] | None:
    """The attempt's worker was lost: resubmit it, or (too many times) its row with no outcome."""
    entry.workers_lost += 1
    if entry.workers_lost <= policy.worker_retries:
        submit(_InFlight(entry.task, entry.infra_retries_used, entry.workers_lost))
        return None
    return synthetic_row(
        job,
        entry.task,
        error_kind=INFRASTRUCTURE,
        message=f"worker lost {entry.workers_lost} times: {lost}",
    )


def _settle(
    attempt: Attempt,
    entry: _InFlight,
    window: Window,
    policy: RetryPolicy,
    delayed: list[tuple[float, int, _InFlight]],
    tokens: Iterator[int],
) -> dict[str, Any] | None:
    """An attempt spoilt by a named infrastructure error: schedule its retry (None), or after the
    last retry its `infrastructure` row."""
    window.on_infra_error()
    if entry.infra_retries_used < policy.retries:
        ready = time.monotonic() + backoff_delay(policy.backoff_s, entry.infra_retries_used)
        retry = _InFlight(entry.task, entry.infra_retries_used + 1, entry.workers_lost)
        heapq.heappush(delayed, (ready, next(tokens), retry))
        return None
    return infrastructure_row(attempt, entry.infra_retries_used)
