"""Child processes that run episodes and can be killed: local processes mode.

Each child is started with the `spawn` method (never fork: the sweep has threads), becomes the
leader of its own session so that a kill reaches whatever the rollout started, loads the
rollout once and then runs one episode per request. An episode past the job's timeout gets
its whole process group SIGKILLed and is stored with no outcome (`episode_timeout`); the next
episode gets a fresh child. While an episode runs its child streams each span to the parent
as it is recorded (span_stream), so a killed episode's row keeps the spans that came before the
kill. Children inherit the sweep's file descriptors, so under --json what
a rollout prints reaches stderr like everything else the target writes.
"""

from __future__ import annotations

import functools
import os
import pickle
import queue
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from poisson_prove.backends._attempt import (
    Attempt,
    async_attempt,
    attempt_with,
    is_async,
    load_rollout,
)
from poisson_prove.episode import recording
from poisson_prove.episode.run import Job, Task, lost_row, timeout_row
from poisson_prove.episode.stream import SpansSoFar, StreamedSpans
from poisson_prove.errors import ProveError
from prove_common.children import kill_group

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

_READY = "ready"
# What a broken or half-written message from a dying child raises on the parent's side.
_LOST = (EOFError, OSError, pickle.UnpicklingError, ValueError, TypeError, AttributeError)


def episode_tag(task: Task) -> tuple[str, int, int]:
    """What tells one episode's streamed spans from another's on a child's pipe."""
    return (task.condition, task.replicate, task.seed)


def _locked_sender(conn: Connection) -> Any:
    """Send on `conn` from any thread (spans may be recorded on threads the rollout starts,
    and messages must not interleave)."""
    lock = threading.Lock()

    def send(message: Any) -> None:
        with lock:
            conn.send(message)

    return send


def child_main(conn: Connection, job: Job) -> None:
    """The child's loop: load the rollout, then answer one Attempt per Task until told to stop."""
    os.setsid()  # its own session: Ctrl-C is the parent's to handle, and a kill reaches the group
    try:
        rollout: Any = load_rollout(job)
    except BaseException as exc:
        conn.send(("error", getattr(exc, "message", f"{type(exc).__name__}: {exc}")))
        return
    conn.send((_READY, None))
    send = _locked_sender(conn)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        # this episode's span lists stream, tagged with it
        recording._STREAMING[0] = functools.partial(StreamedSpans, send, episode_tag(task))
        if is_async(rollout):
            import asyncio  # asyncio (and ssl): ~30 ms, only for an `async def` rollout

            attempt = asyncio.run(async_attempt(rollout, job, task))
        else:
            attempt = attempt_with(rollout, job, task)
        sys.stdout.flush()
        sys.stderr.flush()
        send(attempt)


class _Child:
    def __init__(self, context: Any, job: Job) -> None:
        self._context = context
        self._job = job
        self._process: Any = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        parent_end, child_end = self._context.Pipe()
        process = self._context.Process(
            target=child_main, args=(child_end, self._job), name="prove-episode", daemon=True
        )
        process.start()
        child_end.close()
        self._process, self._conn = process, parent_end
        try:
            kind, payload = parent_end.recv()
        except EOFError:
            process.join(timeout=5.0)  # the pipe closes before the exit is reaped: wait for the code
            code = process.exitcode
            self.kill()
            raise ProveError(
                f'target "{self._job.target}" ended its process while importing (exit code {code})'
            ) from None
        if kind != _READY:
            self.kill()
            raise ProveError(str(payload))
        return parent_end

    def _drain_after_kill(self, stream: SpansSoFar) -> None:
        """SIGKILL the child's group, then keep the spans it sent before it died."""
        process, conn = self._process, self._conn
        if process is None or conn is None:
            return
        kill_group(process.pid)
        process.kill()
        process.join(timeout=5.0)
        try:
            while conn.poll(0):  # finite: the writer is dead, what it wrote is in the pipe
                stream.take(conn.recv())
        except _LOST:  # a message cut by the kill ends what can be read
            pass

    def kill(self) -> None:
        process, self._process = self._process, None
        conn, self._conn = self._conn, None
        if process is not None:
            # killed before its connection closes: a child that saw the end of its connection
            # first would end as a plain process does, atexit hooks and all, before the signal
            kill_group(process.pid)  # the child and whatever it started
            process.kill()
            process.join(timeout=5.0)
        if conn is not None:
            conn.close()

    def stop(self) -> None:
        """Ask the child to end (so its atexit hooks run, as in a plain process), then kill
        its process group: nothing the episodes started outlives the sweep."""
        if self._conn is not None and self._process is not None:
            try:
                self._conn.send(None)
                self._process.join(timeout=5.0)
            except (OSError, ValueError):
                pass
        self.kill()

    def run(self, task: Task) -> Attempt:
        limit = self._job.episode_timeout
        conn = self._conn if self._conn is not None else self._start()
        # Python-level buffers are flushed first so a new child never writes them a second time.
        sys.stdout.flush()
        sys.stderr.flush()
        started = time.time()
        deadline = None if limit is None else time.monotonic() + limit
        stream = SpansSoFar(episode_tag(task))
        try:
            conn.send(task)
            while True:  # spans stream in until the answer; read on so the child never blocks
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not conn.poll(left):
                    break
                message = conn.recv()
                if not stream.take(message):
                    return message
        except _LOST:
            code = self._process.exitcode if self._process is not None else None
            if code is None and self._process is not None:
                self._process.join(timeout=1.0)
                code = self._process.exitcode
            self.kill()
            row = lost_row(self._job, task, started, code)
            why = "process_exit: the episode's process ended while this step ran"
            return Attempt(self._with_spans(row, stream, why))
        self._drain_after_kill(stream)
        self.kill()
        row = timeout_row(self._job, task, float(limit or 0.0), started)
        why = f"episode_timeout: still running when the episode was stopped after {limit or 0.0:g} s"
        return Attempt(self._with_spans(row, stream, why))

    def _with_spans(self, row: dict[str, Any], stream: SpansSoFar, why: str) -> dict[str, Any]:
        limit = (self._job.capture or {}).get("max_observation_bytes")
        row["spans"] = stream.json_text(time.time(), why, limit)
        return row


class ChildSlots:
    """N children, handed out one per running episode (the pool has exactly N threads)."""

    def __init__(self, job: Job, size: int) -> None:
        import multiprocessing  # with socket and pickling support: only when episodes run in children

        context = multiprocessing.get_context("spawn")
        self._free: queue.SimpleQueue[_Child] = queue.SimpleQueue()
        self._all = [_Child(context, job) for _ in range(size)]
        for child in self._all:
            self._free.put(child)

    def run(self, task: Task) -> Attempt:
        child = self._free.get()
        try:
            return child.run(task)
        finally:
            self._free.put(child)

    def close(self, *, graceful: bool = False) -> None:
        """Kill every child at once, or (`graceful`, the work done) let each end first."""
        for child in self._all:
            if graceful:
                child.stop()
            else:
                child.kill()
