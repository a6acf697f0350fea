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
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from poisson_prove.backends._attempt import (
    Attempt,
    describe,
    is_async,
    is_infra_error,
    load_rollout,
    row_job,
    run_attempt,
)
from poisson_prove.backends._children import ChildSlots
from poisson_prove.backends._schedule import Window, drive_rounds
from poisson_prove.backends._settings import concurrency_setting, policy_for_job, retry_policy
from poisson_prove.backends.base import Executor
from poisson_prove.backends.local import LocalExecutor
from poisson_prove.episode.recording import begin_episode, current_spans, end_episode
from poisson_prove.episode.row import ROW_FIELDS
from poisson_prove.episode.run import Job, Task, row_dict, run_into
from poisson_prove.errors import ProveError
from prove_common.switching import switch_interval

if TYPE_CHECKING:
    import asyncio

MODES = ("auto", "threads", "async", "processes")
_STARTED_AT = ROW_FIELDS.index("started_at")  # duration_s follows it


class _Handle:
    """One attempt given to the threads: its task, then its attempt (or, from a thread of the
    row loop, its row tuple) or the exception that building its row raised; `cancelled` before a
    thread takes it, and it never runs."""

    __slots__ = ("attempt", "cancelled", "done", "error", "task")

    def __init__(self, task: Task, done: Callable[[], None]) -> None:
        self.task = task
        self.done = done
        self.attempt: Any = None  # an Attempt, or a clean row tuple (ROW_FIELDS order)
        self.error: BaseException | None = None
        self.cancelled = False


Serve = Callable[["queue.SimpleQueue[_Handle | None]"], None]


class _ThreadEngine:
    """N daemon threads (daemon: a stopped sweep exits at once instead of waiting for them).

    Each attempt is a plain handle on one queue, not a concurrent Future with its lock and
    condition: at a thousand threads the handover is what the sweep spends. The threads take
    the next attempt straight from the queue, which the scheduler keeps `ahead` attempts
    deeper than the threads (`drive` queues ahead), so a thread that finishes never waits for
    the scheduler to be given the GIL before it starts its next episode. `serve(inbox)` is
    what each thread runs: `_per_attempt(work)` calls `work(task)` per handle; `_row_loop` runs
    a sync rollout's episodes through one `run_into` per thread.
    """

    def __init__(self, size: int, serve: Serve) -> None:
        self.ahead = size  # attempts queued beyond the threads, while the window is whole
        self._inbox: queue.SimpleQueue[_Handle | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=serve, args=(self._inbox,), name=f"prove-episode-{i}", daemon=True)
            for i in range(size)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, task: Task, done: Callable[[], None]) -> _Handle:
        handle = _Handle(task, done)
        self._inbox.put(handle)
        return handle

    def outcome(self, handle: _Handle) -> Attempt:
        if handle.error is not None:
            raise handle.error
        attempt = handle.attempt
        assert attempt is not None  # done() is called once one of the two is set
        return attempt if type(attempt) is Attempt else Attempt(attempt)

    def cancel(self, handles: list[Any]) -> None:
        for handle in handles:
            handle.cancelled = True
        for _ in self._threads:
            self._inbox.put(None)


def _per_attempt(work: Callable[[Task], Attempt]) -> Serve:
    """A thread that runs `work(task)` for each handle it takes (child processes, an async
    rollout forced onto threads)."""

    def serve(inbox: queue.SimpleQueue[_Handle | None]) -> None:
        while (handle := inbox.get()) is not None:
            if handle.cancelled:
                continue
            try:
                handle.attempt = work(handle.task)
            except BaseException as exc:  # a bug in row building: re-raised in the sweep's thread
                handle.error = exc
            handle.done()

    return serve


def _row_loop(rollout: Callable[..., Any], job: Job) -> Serve:
    """A thread that runs a sync rollout's episodes through one `run_into` for as long as it
    lives: the handles it takes are run_into's items, and each row is handed back (a row tuple)
    when run_into asks for the next item. A single episode's setup (the row's encoders, the span
    list, the clocks) is paid once per thread, not once per episode, and no row becomes a dict.
    The rows are run_episode's, byte for byte (run_into is the one place a call becomes a row).

    With named infrastructure errors the rollout is wrapped to note them (as `attempt_with`
    does): such a row comes back as an Attempt of its row dict, with the error's text."""
    job = row_job(job)
    infra = tuple(job.infra_errors)

    def serve(inbox: queue.SimpleQueue[_Handle | None]) -> None:
        seen: list[BaseException] = []
        call = rollout
        if infra:

            def call(cfg: dict[str, Any], seed: int) -> Any:
                try:
                    return rollout(cfg, seed)
                except BaseException as exc:
                    if is_infra_error(exc, infra):
                        seen.append(exc)
                    raise

        out: list[tuple[Any, ...]] = []
        held: list[_Handle] = []  # the handle whose episode run_into is running

        def items() -> Iterator[tuple[str, Mapping[str, Any], int, int]]:
            while True:
                if held:  # run_into has appended its row and asks for the next item
                    ran = held.pop()
                    row = out.pop()
                    if seen:
                        ran.attempt = Attempt(row_dict(job, row), describe(seen[-1]))
                        seen.clear()
                    else:
                        ran.attempt = row
                    ran.done()
                handle = inbox.get()
                if handle is None:
                    return
                if handle.cancelled:
                    continue
                held.append(handle)
                task = handle.task
                yield task.condition, task.cfg, task.replicate, task.seed

        while True:
            try:
                run_into(call, job, items(), out)
                return
            except BaseException as exc:  # ProcessExit (its row on it), or a bug in row building
                out.clear()
                seen.clear()
                if not held:
                    raise
                handle = held.pop()
                handle.error = exc  # re-raised in the sweep's thread
                handle.done()

    return serve


class _AsyncEngine:
    """One event loop, in a daemon thread, awaiting the rollout's coroutines, at most `size` at
    once; the rows of those awaited in one turn of the loop are built together (`_build`). The
    attempts queued ahead (`ahead`, see _ThreadEngine) wait in a queue on the engine: one that
    finishes starts the next on the loop itself, without a round trip through the scheduler's
    thread. They reach the loop in bunches: one wake-up of the loop for every attempt submitted
    since the last, not a thread-safe call and a Future each.
    """

    def __init__(self, rollout: Callable[..., Any], job: Job, size: int = 1) -> None:
        self._rollout = rollout
        self._job = job
        self._row_job = row_job(job)
        self._awaited: list[_Handle] = []  # awaited, their rows not built yet (see _build)
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
        """Await one rollout (as `async_attempt` does: its own spans, the job's scope, the
        call's own start and duration), then leave its row to `_build`."""
        import asyncio  # loaded already: the engine's loop runs this

        task = handle.task
        scope = self._job.scope
        started = time.time()
        clock = time.perf_counter()
        result: Any = None
        error: BaseException | None = None
        spans, token = begin_episode()  # the awaited call's own steps, spans and faults
        try:
            try:
                if scope is None:
                    result = await self._rollout(dict(task.cfg), task.seed)
                else:
                    with scope(task.cfg, task.seed):
                        result = await self._rollout(dict(task.cfg), task.seed)
            except Exception as exc:  # the agent's failure (or a named infra error): stored, not raised
                error = exc
            except SystemExit as exc:  # run_into makes it a `system_exit` row, as in sync rollouts
                error = exc
            finally:
                end_episode(token)
        except asyncio.CancelledError:
            return  # cancelled: never reported
        except BaseException as exc:  # os._exit's ProcessExit and the like: re-raised in the sweep's thread
            handle.error = exc
            handle.done()
            return
        finally:
            self._running.pop(handle, None)
            self._fill()
        handle.attempt = (result, error, spans, started, time.perf_counter() - clock)
        self._awaited.append(handle)
        if len(self._awaited) == 1:
            self._loop.call_soon(self._build)

    def _build(self) -> None:
        """The rows of every rollout awaited since the last call, through one `run_into` (on the
        loop): each awaited result (or exception, and spans) replayed as `async_attempt` replays
        it, so validation and row layout stay in one place; `started_at` and `duration_s` are
        the awaited call's own."""
        handles, self._awaited = self._awaited, []
        job, infra = self._row_job, self._job.infra_errors
        replayed: list[Any] = [None]

        def replay(cfg: dict[str, Any], seed: int) -> Any:
            result, error, spans = replayed[0]
            if spans:
                episode_spans = current_spans()
                if episode_spans is not None:
                    episode_spans.extend(spans)
            if error is not None:
                raise error
            return result

        def items() -> Iterator[tuple[str, Mapping[str, Any], int, int]]:
            for handle in handles:
                replayed[0] = handle.attempt[:3]
                task = handle.task
                yield task.condition, task.cfg, task.replicate, task.seed

        out: list[tuple[Any, ...]] = []
        failure: BaseException | None = None
        try:
            run_into(replay, job, items(), out)
        except BaseException as exc:  # a bug in row building: re-raised in the sweep's thread
            failure = exc
        at = _STARTED_AT
        for index, handle in enumerate(handles):
            if index >= len(out):
                handle.error = failure or RuntimeError("the episode's row was not built")
                handle.done()
                continue
            _, error, _, started, duration = handle.attempt
            row = out[index]
            row = (*row[:at], started, duration, *row[at + 2 :])
            if error is not None and is_infra_error(error, infra):
                handle.attempt = Attempt(row_dict(job, row), describe(error))
            else:
                handle.attempt = row
            handle.done()

    def outcome(self, handle: _Handle) -> Attempt:
        if handle.error is not None:
            raise handle.error
        attempt = handle.attempt
        assert attempt is not None  # done() is called once one of the two is set
        return attempt if type(attempt) is Attempt else Attempt(attempt)

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
        self.concurrency = concurrency_setting(settings, 1, "local")
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
        rounds = self.execute_rounds(job, tasks)
        try:
            for rows in rounds:
                for row in rows:
                    yield row if type(row) is dict else row_dict(job, row)
        finally:
            rounds.close()  # cancels what is still in flight

    def execute_rounds(self, job: Job, tasks: Iterator[Task]) -> Generator[list[Any], None, None]:
        """`execute`, a round of finished rows at a time, each a row dict or (a clean row of a
        sync rollout on the threads) a row tuple in ROW_FIELDS order without the run id, as
        the sweep's batches hold them: no row becomes a dict and back."""
        policy, job = policy_for_job(self.policy, self.settings, job)
        rollout = None if job.episode_timeout is not None else load_rollout(job)
        mode = self.resolve_mode(job, rollout)
        engine: _ThreadEngine | _AsyncEngine
        slots: ChildSlots | None = None
        if mode == "processes":
            slots = ChildSlots(job, self.concurrency)
            engine = _ThreadEngine(self.concurrency, _per_attempt(slots.run))
        elif mode == "async":
            assert rollout is not None
            engine = _AsyncEngine(rollout, job, self.concurrency)
        else:
            assert rollout is not None
            engine = _ThreadEngine(self.concurrency, _sync_threads(rollout, job))
        self.window = Window(self.concurrency)
        try:
            with _switch_interval(0 if mode == "async" else self.concurrency):
                yield from drive_rounds(engine, job, tasks, self.window, policy)
        finally:
            if slots is not None:
                slots.close()


def _sync_threads(rollout: Callable[..., Any], job: Job) -> Serve:
    """What a thread runs for a sync rollout: its episodes through one run_into (`_row_loop`),
    the rollout loaded once and the check for a coroutine function made once."""
    if is_async(rollout):  # mode = "threads" forced on an async def: each awaited in its thread
        return _per_attempt(lambda task: run_attempt(job, task))
    return _row_loop(rollout, job)


# The GIL's switch interval while many threads run episodes. A thread waiting for the GIL wakes
# every interval to ask for it: with a thousand threads waking from their I/O, the default 5 ms
# makes that hundreds of thousands of futex wake-ups a second on the machine's cores, which
# halved the rate of a bare thread pool at concurrency 1,024. The interval grows with the
# threads (50 us each, from 5 ms at 100 to 50 ms at 1,000) and never shrinks what it found.
_SWITCH_PER_THREAD_S = 50e-6
_SWITCH_MAX_S = 0.05


def _switch_interval(threads: int) -> AbstractContextManager[None]:
    return switch_interval(min(_SWITCH_MAX_S, _SWITCH_PER_THREAD_S * threads), only="longer")


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
