"""The one small executor interface every backend implements (its inputs, `Job` and `Task`,
are the episode runner's own, in episode/run.py).

`sweep` hands an executor a `Job` (what to call, picklable, so remote workers can import the
target themselves) and an iterator of `Task`s (the planned episodes not yet stored). The
executor yields finished rows (dicts with the store's episode columns, see
store.table.episode_schema()) in any order; the sweep is their single writer. Stopping is
closing the generator: the executor's `finally` cancels whatever is still in flight. Ctrl-C
arrives as KeyboardInterrupt in the sweep's thread and closes the generator the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from poisson_prove.episode.run import Job, Task


class Executor(ABC):
    """Runs tasks and streams back finished rows."""

    name: str = "abstract"

    def runs_in_caller(self, job: Job) -> bool:
        """Whether this executor would run `job`'s episodes in the calling thread, one after
        another, in plan order. Then the sweep runs them itself on its fused path (the same rows,
        without a Task and a dict per episode). False for pools, clusters and remote backends."""
        return False

    def capture_missing(self, instrument: Sequence[str]) -> dict[str, str]:
        """name -> why, for each instrumentor named in [capture] that the workers lack where they
        are not this machine (asked before the run's manifest is written; the sweep's own probe
        covers this machine). Empty for backends whose workers it cannot ask."""
        return {}

    @abstractmethod
    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        """Yield one row per task, in any order; on close, cancel what is in flight."""
