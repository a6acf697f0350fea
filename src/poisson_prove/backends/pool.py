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
import collections
import importlib.machinery
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from poisson_prove.backends._attempt import (
    Attempt,
    async_attempt,
    attempt_with,
    is_async,
    load_rollout,
    row_job,
    run_attempt,
)
from poisson_prove.backends._children import ChildSlots
from poisson_prove.backends._schedule import Window, drive
from poisson_prove.backends._settings import policy_for_job, positive_int, retry_policy
from poisson_prove.backends.base import Executor
from poisson_prove.backends.local import LocalExecutor
from poisson_prove.episode.run import Job, Task, run_episode
from poisson_prove.errors import ProveError

if TYPE_CHECKING:
    import asyncio

MODES = ("auto", "threads", "async", "processes")


class _Handle:
    """One attempt given to the threads: its task, then its attempt or the exception that
    building its row raised; `cancelled` before a thread takes it, and it never runs."""

    __slots__ = ("attempt", "cancelled", "done", "error", "task")

    def __init__(self, task: Task, done: Callable[[], None]) -> None:
        self.task = task
        self.done = done
        self.attempt: Attempt | None = None
        self.error: BaseException | None = None
        self.cancelled = False


class _ThreadEngine:
    """N daemon threads (daemon: a stopped sweep exits at once instead of waiting for them).

    Each attempt is a plain handle on one queue, not a concurrent Future with its lock and
    condition: at a thousand threads the handover is what the sweep spends. The threads take
    the next attempt straight from the queue, which the scheduler keeps `ahead` attempts
    deeper than the threads (`drive` queues ahead), so a thread that finishes never waits for
    the scheduler to be given the GIL before it starts its next episode.
    """

    def __init__(self, size: int, work: Callable[[Task], Attempt]) -> None:
        self._work = work
        self.ahead = size  # attempts queued beyond the threads, while the window is whole
        self._inbox: queue.SimpleQueue[_Handle | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._serve, name=f"prove-episode-{i}", daemon=True)
            for i in range(size)
        ]
        for thread in self._threads:
            thread.start()

    def _serve(self) -> None:
        inbox, work = self._inbox, self._work
        while (handle := inbox.get()) is not None:
            if handle.cancelled:
                continue
            try:
                handle.attempt = work(handle.task)
            except BaseException as exc:  # a bug in row building: re-raised in the sweep's thread
                handle.error = exc
            handle.done()

    def submit(self, task: Task, done: Callable[[], None]) -> _Handle:
        handle = _Handle(task, done)
        self._inbox.put(handle)
        return handle

    def outcome(self, handle: _Handle) -> Attempt:
        if handle.error is not None:
            raise handle.error
        assert handle.attempt is not None  # done() is called once one of the two is set
        return handle.attempt

    def cancel(self, handles: list[Any]) -> None:
        for handle in handles:
            handle.cancelled = True
        for _ in self._threads:
            self._inbox.put(None)


class _AsyncEngine:
    """One event loop, in a daemon thread, awaiting the rollout's coroutines, at most `size` at
    once. The attempts queued ahead (`ahead`, see _ThreadEngine) wait in a queue on the engine:
    one that finishes starts the next on the loop itself, without a round trip through the
    scheduler's thread. They reach the loop in bunches: one wake-up of the loop for every
    attempt submitted since the last, not a thread-safe call and a Future each.
    """

    def __init__(self, rollout: Callable[..., Any], job: Job, size: int = 1) -> None:
        self._rollout = rollout
        self._job = job
        self._size = size
        self.ahead = size
        self._incoming: collections.deque[_Handle] = collections.deque()
        self._waking = False  # a drain of `_incoming` is scheduled on the loop
        self._closing = False
        self._lock = threading.Lock()
        import asyncio  # asyncio (and ssl): ~30 ms, only for an `async def` rollout

        self._running: dict[_Handle, asyncio.Task[None]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="prove-event-loop", daemon=True
        )
        self._thread.start()

    def submit(self, task: Task, done: Callable[[], None]) -> _Handle:
        handle = _Handle(task, done)
        self._incoming.append(handle)
        with self._lock:
            if self._waking:
                return handle
            self._waking = True
        self._loop.call_soon_threadsafe(self._drain)
        return handle

    def _drain(self) -> None:
        with self._lock:
            self._waking = False
        self._fill()

    def _fill(self) -> None:
        """Start queued attempts while fewer than `size` run (on the loop)."""
        while not self._closing and len(self._running) < self._size and self._incoming:
            handle = self._incoming.popleft()
            if not handle.cancelled:
                self._running[handle] = self._loop.create_task(self._run(handle))

    async def _run(self, handle: _Handle) -> None:
        import asyncio  # loaded already: the engine's loop runs this

        try:
            handle.attempt = await async_attempt(self._rollout, self._job, handle.task)
        except asyncio.CancelledError:
            return  # cancelled: never reported
        except BaseException as exc:  # a bug in row building: re-raised in the sweep's thread
            handle.error = exc
        finally:
            self._running.pop(handle, None)
            self._fill()
        handle.done()

    def outcome(self, handle: _Handle) -> Attempt:
        if handle.error is not None:
            raise handle.error
        assert handle.attempt is not None  # done() is called once one of the two is set
        return handle.attempt

    def cancel(self, handles: list[Any]) -> None:
        for handle in handles:
            handle.cancelled = True
        if self._loop.is_closed():
            return

        def cancel_running() -> None:
            self._closing = True
            for runner in list(self._running.values()):
                runner.cancel()
            self._loop.call_soon(self._loop.stop)  # after the cancellations land in their coroutines

        self._loop.call_soon_threadsafe(cancel_running)
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
            engine = _AsyncEngine(rollout, job, self.concurrency)
        else:
            assert rollout is not None
            engine = _ThreadEngine(self.concurrency, _sync_attempts(rollout, job))
        self.window = Window(self.concurrency)
        try:
            yield from drive(engine, job, tasks, self.window, policy)
        finally:
            if slots is not None:
                slots.close()


def _sync_attempts(rollout: Callable[..., Any], job: Job) -> Callable[[Task], Attempt]:
    """What a thread runs per attempt of a sync rollout: `run_attempt`'s work, with the rollout
    loaded once and the check for a coroutine function made once, not per episode."""
    if is_async(rollout):  # mode = "threads" forced on an async def: each awaited in its thread
        return lambda task: run_attempt(job, task)
    job = row_job(job)
    if job.infra_errors:
        return lambda task: attempt_with(rollout, job, task)
    return lambda task: Attempt(run_episode(rollout, job, task))


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
