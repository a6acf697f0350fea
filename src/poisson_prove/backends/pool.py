"""Local concurrency: N episodes at once on this machine.

Three ways to run them, chosen by `[local] mode` (default "auto"):
- threads: N daemon threads calling a sync rollout (agents wait on model APIs, so the GIL is
  released while they wait);
- async: one asyncio event loop awaiting `async def rollout` coroutines, N at once;
- processes: N child processes, each its own session, so an episode past --episode-timeout is
  killed for real (its whole process group) and the child replaced.
"auto" picks processes when the job has an episode timeout, async for a coroutine function,
threads otherwise. The scheduling (window, AIMD backoff, infrastructure retries) is _schedule's.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import importlib.machinery
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from poisson_prove.backends._attempt import (
    Attempt,
    async_attempt,
    is_async,
    load_rollout,
    run_attempt,
)
from poisson_prove.backends._children import ChildSlots
from poisson_prove.backends._schedule import Window, drive
from poisson_prove.backends._settings import policy_for_job, positive_int, retry_policy
from poisson_prove.backends.base import Executor
from poisson_prove.backends.local import LocalExecutor
from poisson_prove.episode.run import Job, Task
from poisson_prove.errors import ProveError

MODES = ("auto", "threads", "async", "processes")


class _FutureEngine:
    """An engine whose handles are concurrent futures: their outcome is the future's result."""

    def outcome(self, handle: concurrent.futures.Future[Attempt]) -> Attempt:
        return handle.result()

    def cancel(self, handles: list[Any]) -> None:
        for handle in handles:
            handle.cancel()
        self._stop()

    def _stop(self) -> None:
        """Stop the engine once the handles are cancelled."""


class _ThreadEngine(_FutureEngine):
    """N daemon threads (daemon: a stopped sweep exits at once instead of waiting for them)."""

    def __init__(self, size: int, work: Callable[[Task], Attempt]) -> None:
        self._work = work
        self._inbox: queue.SimpleQueue[tuple[concurrent.futures.Future[Attempt], Task] | None] = (
            queue.SimpleQueue()
        )
        self._threads = [
            threading.Thread(target=self._serve, name=f"prove-episode-{i}", daemon=True)
            for i in range(size)
        ]
        for thread in self._threads:
            thread.start()

    def _serve(self) -> None:
        while (item := self._inbox.get()) is not None:
            future, task = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._work(task))
            except BaseException as exc:  # a bug in row building: re-raised in the sweep's thread
                future.set_exception(exc)

    def submit(self, task: Task, done: Callable[[], None]) -> concurrent.futures.Future[Attempt]:
        future: concurrent.futures.Future[Attempt] = concurrent.futures.Future()
        future.add_done_callback(lambda _: done())
        self._inbox.put((future, task))
        return future

    def _stop(self) -> None:
        for _ in self._threads:
            self._inbox.put(None)


class _AsyncEngine(_FutureEngine):
    """One event loop, in a daemon thread, awaiting the rollout's coroutines."""

    def __init__(self, rollout: Callable[..., Any], job: Job) -> None:
        self._rollout = rollout
        self._job = job
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="prove-event-loop", daemon=True
        )
        self._thread.start()

    def submit(self, task: Task, done: Callable[[], None]) -> concurrent.futures.Future[Attempt]:
        future = asyncio.run_coroutine_threadsafe(
            async_attempt(self._rollout, self._job, task), self._loop
        )
        future.add_done_callback(lambda _: done())
        return future

    def _stop(self) -> None:
        # Let the cancellations land in their coroutines, then stop the loop.
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=2.0)
        if not self._thread.is_alive():
            self._loop.close()


class PoolExecutor(Executor):
    """Runs up to `concurrency` episodes at once on this machine.

    Settings read (the [local] table merged with the command line): concurrency (default 1),
    mode ("auto" | "threads" | "async" | "processes"), infra_errors, infra_retries (default 3),
    infra_backoff (seconds before the first retry, default 1, doubling, capped at 30).
    """

    name = "local"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.concurrency = positive_int(settings, "concurrency", 1, "local")
        mode = settings.get("mode") or "auto"
        if mode not in MODES:
            raise ProveError(
                f"[local] mode must be one of {', '.join(MODES)}, got {mode!r}",
                suggestions=['mode = "auto"'],
            )
        self.mode: str = mode
        self.settings = dict(settings)
        self.policy = retry_policy(settings, "local")
        self.window: Window | None = None  # the last run's window (how far it backed off)

    def resolve_mode(self, job: Job, rollout: Callable[..., Any] | None) -> str:
        """What actually runs: a timeout needs processes (a thread cannot be stopped)."""
        if job.episode_timeout is not None or self.mode == "processes":
            return "processes"
        if self.mode == "threads":
            return "threads"
        return "async" if rollout is not None and is_async(rollout) else "threads"

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        policy, job = policy_for_job(self.policy, self.settings, job)
        rollout = None if job.episode_timeout is not None else load_rollout(job)
        mode = self.resolve_mode(job, rollout)
        engine: _ThreadEngine | _AsyncEngine
        slots: ChildSlots | None = None
        if mode == "processes":
            slots = ChildSlots(job, self.concurrency)
            engine = _ThreadEngine(self.concurrency, slots.run)
        elif mode == "async":
            assert rollout is not None
            engine = _AsyncEngine(rollout, job)
        else:
            engine = _ThreadEngine(self.concurrency, lambda task: run_attempt(job, task))
        self.window = Window(self.concurrency)
        try:
            yield from drive(engine, job, tasks, self.window, policy)
        finally:
            if slots is not None:
                slots.close()


def declares_async(job: Job) -> bool:
    """Whether the job's target is an `async def`, read from its source without running it
    (under --episode-timeout the sweep's own process never imports the target)."""
    module_name, _, attr = job.target.partition(":")
    parts = module_name.split(".")
    try:
        spec = importlib.machinery.PathFinder.find_spec(parts[0], [job.spec_dir, *sys.path])
        for depth in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return False
            spec = importlib.machinery.PathFinder.find_spec(
                ".".join(parts[: depth + 1]), list(spec.submodule_search_locations)
            )
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return False
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, ImportError):
        return False
    return any(isinstance(node, ast.AsyncFunctionDef) and node.name == attr for node in tree.body)


class DefaultLocalExecutor(Executor):
    """The default local backend (concurrency 1): the sequential LocalExecutor for a plain
    rollout, and a one-slot pool for an `async def rollout`, which the sequential path does not
    await. Everything else about the run is the same."""

    name = "local"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = dict(settings)

    def runs_in_caller(self, job: Job) -> bool:
        return job.episode_timeout is None and not is_async(load_rollout(job))

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        # Under a timeout the target is only read, never imported, in the sweep's own process.
        timed = job.episode_timeout is not None
        if declares_async(job) if timed else is_async(load_rollout(job)):
            yield from PoolExecutor({**self.settings, "concurrency": 1}).execute(job, tasks)
            return

        yield from LocalExecutor().execute(job, tasks)
