"""Feeding a run's planned episodes through an executor into its batch sink.

Two paths give the same rows. When the executor says it would run the episodes in this thread,
one after another (`Executor.runs_in_caller`), the sweep runs them itself on a fused path: row
tuples straight from `execute.run_into`, without a Task and a dict per episode. Any other
executor (a pool, a cluster, a remote backend) gets Tasks and streams row dicts back in any
order. Either way the sink (`BatchSink`, below) counts and writes whole batches, when full or
after about a second, and Ctrl-C (KeyboardInterrupt) passes through to the caller with every
finished row still in the sink.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from poisson_prove.episode_table import ERROR_KIND_AT, ERROR_MESSAGE_AT, OUTCOME_AT, tuples_to_table

if TYPE_CHECKING:
    from poisson_prove.backends.base import Executor
    from poisson_prove.execute import Job
    from poisson_prove.plan import Plan
    from poisson_prove.store import RunWriter

#: Seconds between two refreshes of a running sweep's manifest counts.
MANIFEST_REFRESH_S = 1.0
#: Seconds finished rows may wait for a batch to fill before they are written anyway: a kill
#: loses at most about this much work, while fast rollouts still get large batches.
BATCH_WAIT_S = 1.0

#: progress(done this call, to run this call)
Progress = Callable[[int, int], None]

#: Episodes run between two progress reports on the fused path, at most.
_CHUNK = 256
#: Seconds between two progress reports (and flush checks) on the fused path, at most.
_REPORT_S = 0.25


def run_planned(
    executor: Executor,
    job: Job,
    plan: Plan,
    salt: str,
    skip: set[tuple[str, int]],
    limit: int | None,
    sink: BatchSink,
    progress: Progress | None,
) -> None:
    """Run the planned episodes not in `skip` (at most `limit`) into `sink`.

    A rollout that calls os._exit in this process ends the loop with ProcessExit, its
    `process_exit` row already in the sink (execute.os_exit_guard is the caller's).
    """
    from poisson_prove.episode_table import row_tuple
    from poisson_prove.execute import ProcessExit
    from poisson_prove.plan import planned_items, planned_tasks

    to_run = plan.rollouts - len(skip)
    if limit is not None:
        to_run = min(to_run, limit)
    # [chaos] decides per episode (its seed and condition), which the fused path does not pass.
    if executor.runs_in_caller(job) and not job.chaos:
        from poisson_prove.execute import load_target, run_into

        rollout = load_target(job)
        items = planned_items(plan.cells, plan.replicates, salt, skip, limit)
        clock = time.perf_counter
        step = max(1, min(_CHUNK, to_run // 20))  # progress at least every twentieth of the work
        # Back to this loop every `step` episodes, every quarter second, and as soon as a batch
        # is full: the progress line moves, and a batch is written when full or after a second.
        while run_into(
            rollout,
            job,
            items,
            sink.pending,
            until=clock() + _REPORT_S,
            full=min(sink.size, len(sink.pending) + step),
        ):
            sink.account()
            sink.maybe_flush()
            if progress is not None:
                progress(sink.ran, to_run)
        return
    rows = executor.execute(job, planned_tasks(plan.cells, plan.replicates, salt, skip, limit))
    try:
        for row in rows:
            sink.pending.append(row_tuple(row))
            sink.account()
            sink.maybe_flush()
            if progress is not None:
                progress(sink.ran, to_run)
    except ProcessExit as exc:  # raised in a pool thread: its row comes with it
        if exc.row is not None:
            sink.pending.append(row_tuple(exc.row))
        raise
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()  # the executor's `finally` cancels what is still in flight


class BatchSink:
    """Row tuples on their way to the store: counted, then written a batch at a time, when
    `size` rows are waiting or the oldest has waited `wait_s` seconds, whichever comes first."""

    def __init__(
        self,
        writer: RunWriter,
        size: int,
        planned: int,
        stored: int,
        errored: int,
        wait_s: float = BATCH_WAIT_S,
    ) -> None:
        self.writer = writer
        self.size = size
        self.wait_s = wait_s
        self._last_write = time.monotonic()
        self.planned = planned
        self.stored = stored
        self.errored_before = errored
        self.pending: list[tuple[Any, ...]] = []
        self.counted = 0  # rows of `pending` already counted
        self.ran = self.errored = self.system_exits = 0
        self.written = self.errored_written = 0
        self.first_error: str | None = None
        self._counts_refreshed = time.monotonic()
        #: Called with each batch once it is written (`--stop-when-settled` looks there).
        self.on_write: Callable[[list[tuple[Any, ...]]], None] | None = None

    def account(self) -> None:
        """Count the rows appended since the last call (errors, sys.exit calls)."""
        new = self.pending[self.counted :]
        self.counted = len(self.pending)
        self.ran += len(new)
        for row in new:
            if row[OUTCOME_AT] is None:
                self.errored += 1
                if self.first_error is None:
                    self.first_error = f"{row[ERROR_KIND_AT]}: {row[ERROR_MESSAGE_AT]}"
                if row[ERROR_KIND_AT] == "system_exit":
                    self.system_exits += 1

    def maybe_flush(self) -> None:
        while len(self.pending) >= self.size or (
            self.pending and time.monotonic() - self._last_write >= self.wait_s
        ):
            self.account()
            batch, rest = self.pending[: self.size], self.pending[self.size :]
            self._write(batch)
            self.pending, self.counted = rest, len(rest)
            # The manifest's counts follow what is stored, at most once a second: they are a
            # convenience (the batch files stay the truth) and rewriting the whole manifest
            # after every small batch cost as much as the batch's fsync.
            now = time.monotonic()
            if now - self._counts_refreshed >= MANIFEST_REFRESH_S:
                self._counts_refreshed = now
                self.writer.update_manifest(
                    durable=False,
                    counts={
                        "planned": self.planned,
                        "done": self.stored + self.written,
                        "errored": self.errored_before + self.errored_written,
                    },
                )

    def _write(self, batch: list[tuple[Any, ...]]) -> None:
        self.writer.write_batch(tuples_to_table(self.writer.manifest["run_id"], batch))
        self._last_write = time.monotonic()
        self.written += len(batch)
        self.errored_written += sum(1 for row in batch if row[OUTCOME_AT] is None)
        if self.on_write is not None:
            self.on_write(batch)

    def flush(self) -> None:
        if self.pending:
            self._write(self.pending)
            self.pending = []
            self.counted = 0
