"""The local backend: episodes on this machine, one after another.

Without an episode timeout each rollout runs in this process (the fastest path: no pickling,
no process start). With `Job.episode_timeout` the episodes run in a child process, one at a
time; an episode still running past the limit has its child killed (SIGKILL, so no handler in
the agent can hold it up) and is stored with no outcome, kind `episode_timeout`; the next
episode gets a fresh child. The child is started with the `spawn` method so that it never
inherits a lock held by a thread of this process (the progress bar's, a client library's).
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

from poisson_prove.backends.base import Executor, Job, Task
from poisson_prove.errors import ProveError


class LocalExecutor(Executor):
    """In-process episodes, or one child process at a time under an episode timeout."""

    name = "local"

    def runs_in_caller(self, job: Job) -> bool:
        return job.episode_timeout is None

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        if job.episode_timeout is None:
            yield from _in_process(job, tasks)
        else:
            yield from _in_child(job, tasks, float(job.episode_timeout))


def _in_process(job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
    from poisson_prove.execute import load_target, run_episode

    rollout = load_target(job)
    for task in tasks:
        yield run_episode(rollout, job, task)


def _child_main(job: Job, conn: Connection) -> None:
    """The child's loop: load the target once, then run each task it is sent."""
    # Ctrl-C reaches the whole process group; the parent decides, and kills this child.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from poisson_prove.execute import load_target, run_episode

    try:
        rollout = load_target(job)
    except BaseException as exc:
        conn.send(("error", getattr(exc, "message", f"{type(exc).__name__}: {exc}")))
        return
    conn.send(("ready", None))
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        row = run_episode(rollout, job, task)
        sys.stdout.flush()
        sys.stderr.flush()
        conn.send(("row", row))


class _Child:
    """One child process and its end of the pipe."""

    def __init__(self, job: Job) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child_conn = context.Pipe()
        # Python-level buffers are flushed first so the child never writes them a second time.
        sys.stdout.flush()
        sys.stderr.flush()
        self.process = context.Process(target=_child_main, args=(job, child_conn), daemon=True)
        self.process.start()
        child_conn.close()
        try:
            kind, payload = self.conn.recv()
        except EOFError:
            self.kill()
            raise ProveError(
                f'target "{job.target}" ended its process while importing (exit code {self.process.exitcode})'
            ) from None
        if kind == "error":
            self.kill()
            raise ProveError(str(payload))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
            self.process.join(timeout=5)
        except (OSError, ValueError):
            pass
        self.kill()


def _in_child(job: Job, tasks: Iterator[Task], limit: float) -> Iterator[dict[str, Any]]:
    from poisson_prove.execute import lost_row, timeout_row

    child: _Child | None = None
    try:
        for task in tasks:
            if child is None:
                child = _Child(job)
            started = time.time()
            child.conn.send(task)
            if child.conn.poll(limit):
                try:
                    _kind, row = child.conn.recv()
                except EOFError:
                    row = lost_row(job, task, started, _exitcode(child))
                    child.kill()
                    child = None
                yield row
            else:
                child.kill()
                child = None
                yield timeout_row(job, task, limit, started)
    except BaseException:
        # Ctrl-C, or the sweep closed this generator: stop the episode in flight at once.
        if child is not None:
            child.kill()
            child = None
        raise
    finally:
        if child is not None:
            child.stop()


def _exitcode(child: _Child) -> int | None:
    child.process.join(timeout=5)
    return child.process.exitcode
