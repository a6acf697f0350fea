"""The batch sink: a sweep's finished rows, counted, then written to the run a batch at a time
(when full or after about a second), with the manifest's counts kept roughly current. In a
benchmark's sweep each row without a `case_id` of its own gets its condition's case id as it is
written.

A batch's table is built in the sweep's thread; its Parquet file is written, fsynced and renamed
into place (and appended to the run's running compaction) by one thread of the sink's own, in
order, while the rollouts go on: pyarrow encodes and the OS syncs without holding the GIL, so on
a second core that work costs the episodes almost nothing. A row counts as written only once its
file is in place; the sink waits for its writes before a look (`--stop-when-settled`) and when
it is flushed, and an error of a write is raised in the sweep's thread there or at the next
batch."""

from __future__ import annotations

import operator
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from poisson_prove.store.table import (
    ERROR_KIND_AT,
    ERROR_MESSAGE_AT,
    OUTCOME_AT,
    ROW_FIELDS,
    tuples_to_table,
)
from prove_common.switching import switch_interval

if TYPE_CHECKING:
    from poisson_prove.store.runs import RunWriter

#: Seconds between two refreshes of a running sweep's manifest counts.
MANIFEST_REFRESH_S = 1.0
#: Seconds finished rows may wait for a batch to fill before they are written anyway: a kill
#: loses at most about this much work, while fast rollouts still get large batches.
BATCH_WAIT_S = 1.0
#: Batches built and waiting for the writer thread, at most (the sweep's thread then waits).
WRITES_WAITING = 2
#: The interpreter's switch interval while episodes run in the sweep's thread beside the writer
#: thread: each time the writer comes back from pyarrow (a batch written, a file synced) it waits
#: for the GIL, and the default 5 ms let that handoff cost the episodes a sixth of their time at a
#: microsecond each (BENCHMARKS.md: the hot path's wall against its thread's CPU time).
HANDOFF_INTERVAL_S = 0.0005
_CONDITION_AT = ROW_FIELDS.index("cell")
_CASE_ID_AT = ROW_FIELDS.index("case_id")
_OUTCOME_OF = operator.itemgetter(OUTCOME_AT)


@contextmanager
def ctrl_c_after() -> Iterator[None]:
    """Hold a Ctrl-C until the block is done, then raise it.

    A batch is written, then taken off the pending rows. A Ctrl-C between the two (the file is
    in place, the rows still pending) made the final flush write those rows again: a run that
    stores episodes twice, which every later read refuses. Only the main thread can set a
    signal handler; elsewhere (a library caller's thread) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            if callable(previous):
                previous(signal.SIGINT, None)  # the default handler raises KeyboardInterrupt
            elif previous == signal.SIG_DFL:
                raise KeyboardInterrupt


def quick_handoffs() -> AbstractContextManager[None]:
    """The block at HANDOFF_INTERVAL_S of switch interval (a caller's own shorter one stays)."""
    return switch_interval(HANDOFF_INTERVAL_S, only="shorter")


class _WriterThread:
    """Batches written one after another by a thread of their own (see the module docstring).

    Its name starts with "prove-", so an os._exit it never calls is not taken for a rollout's
    own thread (episode.run.os_exit_guard)."""

    def __init__(self, write: Callable[[Any], Any]) -> None:
        self._write = write
        self._queue: queue.Queue[tuple[Any, Callable[[], None]] | None] = queue.Queue(WRITES_WAITING)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="prove-batch-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                if self._error is None:  # after a failed write, nothing more is written
                    table, done = item
                    self._write(table)
                    done()
            except BaseException as exc:  # raised in the sweep's thread (`raise_error`)
                self._error = exc
            finally:
                self._queue.task_done()

    def raise_error(self) -> None:
        if self._error is not None:  # kept: every later write is refused too
            raise self._error

    def put(self, table: Any, done: Callable[[], None]) -> None:
        """Write `table` after those waiting, then call `done()` (in the writer thread)."""
        self.raise_error()
        self._queue.put((table, done))

    def drain(self) -> None:
        """Wait until every batch put is in place; raise a write's error."""
        self._queue.join()
        self.raise_error()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


class BatchSink:
    """Row tuples on their way to the store: counted, then written a batch at a time, when
    `size` rows are waiting or the oldest has waited `wait_s` seconds, whichever comes first.

    `case_ids` (a benchmark's: design.plan.Plan.case_ids) gives each condition's case id, written
    into every row of it whose rollout gave none (one that gave its own keeps it)."""

    def __init__(
        self,
        writer: RunWriter,
        size: int,
        planned: int,
        stored: int,
        errored: int,
        wait_s: float = BATCH_WAIT_S,
        *,
        case_ids: Mapping[str, str] | None = None,
    ) -> None:
        self.writer = writer
        self.case_ids = case_ids
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
        #: Told the rows as they are counted; True: a look is due, so the rows waiting are
        #: written now, however few (`--stop-when-settled`: a look at its planned replicates).
        self.on_rows: Callable[[list[tuple[Any, ...]]], bool] | None = None
        self._cut = False
        #: Called with each batch once it is written and no counted row waits (the look).
        self.on_write: Callable[[list[tuple[Any, ...]]], None] | None = None
        self._writes: _WriterThread | None = None

    def account(self) -> None:
        """Count the rows appended since the last call (errors, sys.exit calls)."""
        new = self.pending[self.counted :]
        self.counted = len(self.pending)
        self.ran += len(new)
        if self.on_rows is not None and new and self.on_rows(new):
            self._cut = True
        if None not in map(_OUTCOME_OF, new):
            return  # no errored row: nothing more to count (the common case, in one pass)
        for row in new:
            if row[OUTCOME_AT] is None:
                self.errored += 1
                if self.first_error is None:
                    self.first_error = f"{row[ERROR_KIND_AT]}: {row[ERROR_MESSAGE_AT]}"
                if row[ERROR_KIND_AT] == "system_exit":
                    self.system_exits += 1

    def _with_case_ids(self, batch: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The batch with each row's case id: its own, else its condition's."""
        case_ids, at = self.case_ids or {}, _CASE_ID_AT
        out = []
        for row in batch:
            case = case_ids.get(row[_CONDITION_AT]) if row[at] is None else None
            out.append(row if case is None else (*row[:at], case, *row[at + 1 :]))
        return out

    def maybe_flush(self) -> None:
        while len(self.pending) >= self.size or (
            self.pending and (self._cut or time.monotonic() - self._last_write >= self.wait_s)
        ):
            self.account()
            batch, rest = self.pending[: self.size], self.pending[self.size :]
            with ctrl_c_after():
                self._write(batch)
                self.pending, self.counted = rest, len(rest)
            self._written(batch)
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
        if self.case_ids is not None:
            batch = self._with_case_ids(batch)
        table = tuples_to_table(self.writer.manifest["run_id"], batch)
        rows, errored = len(batch), table.column("outcome").null_count  # an errored row's only

        def done() -> None:
            self.written += rows
            self.errored_written += errored

        if self._writes is None:
            self._writes = _WriterThread(self.writer.write_batch)
        self._writes.put(table, done)
        self._last_write = time.monotonic()

    def drain(self) -> None:
        """Wait until every batch given to the writer thread is in place (raise its error)."""
        if self._writes is not None:
            self._writes.drain()

    def close(self) -> None:
        """End the writer thread once its batches are in place (errors stay unraised)."""
        if self._writes is not None:
            writes, self._writes = self._writes, None
            writes.close()

    def _written(self, batch: list[tuple[Any, ...]]) -> None:
        """After a batch is given to be written: the look, once it and every batch before it
        are in place and no counted row is still waiting."""
        if not self.pending:
            self._cut = False
            if self.on_write is not None:
                self.drain()
                self.on_write(batch)

    def flush(self) -> None:
        """Write every pending row and wait until every batch is in place."""
        if self.pending:
            self.account()
            batch = self.pending
            with ctrl_c_after():
                self._write(batch)
                self.pending = []
                self.counted = 0
            self._written(batch)
        with ctrl_c_after():
            self.drain()
