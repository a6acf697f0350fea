"""The local backend: episodes on this machine, one after another.

Without an episode timeout each rollout runs in this process (the fastest path: no pickling,
no process start). With `Job.episode_timeout` the episodes run in a child process, one at a
time (backends/_children.py, the runner the pool's processes mode uses too); an episode still
running past the limit has its child's whole process group killed (SIGKILL, so no handler in
the agent can hold it up, and nothing it started is left behind) and is stored with no
outcome, kind `episode_timeout`; the next episode gets a fresh child. One that ends its
process (os._exit, a crash) is stored as `process_exit`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from poisson_prove.backends._children import ChildSlots
from poisson_prove.backends.base import Executor
from poisson_prove.episode.run import Job, Task, run_episode
from poisson_prove.episode.target import load_target


class LocalExecutor(Executor):
    """In-process episodes, or one child process at a time under an episode timeout."""

    name = "local"

    def runs_in_caller(self, job: Job) -> bool:
        return job.episode_timeout is None

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        if job.episode_timeout is None:
            yield from _in_process(job, tasks)
        else:
            yield from _in_child(job, tasks)


def _in_process(job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
    rollout = load_target(job)
    for task in tasks:
        yield run_episode(rollout, job, task)


def _in_child(job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
    """One child at a time, the same runner as the pool's processes mode (backends/_children):
    its own session, so a timed-out episode's whole process group is killed, grandchildren too."""
    slots = ChildSlots(job, 1)
    finished = False
    try:
        for task in tasks:
            yield slots.run(task).row
        finished = True
    finally:
        # Ctrl-C or a closed generator: the episode in flight is killed at once.
        slots.close(graceful=finished)
