"""The batch sink under Ctrl-C: a batch is written once, however late the interrupt lands."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from poisson_prove.store.runs import RunStore
from poisson_prove.store.table import ROW_FIELDS, row_tuple
from poisson_prove.sweep import batches
from poisson_prove.sweep.batches import BatchSink


def _rows(n: int) -> list[tuple]:
    return [
        row_tuple({
            "cell": "x=a", "cfg": '{"x": "a"}', "replicate": i, "seed": 1000 + i, "outcome": "ok",
            "t": 1.0, "horizon": 5.0, "case_id": "a", "meta": "{}", "error_kind": None,
            "error_message": None, "started_at": 1_700_000_000.0, "duration_s": 0.01, "spans": None,
        })
        for i in range(n)
    ]


@pytest.mark.parametrize("how", ["full batch", "final flush"])
def test_ctrl_c_right_after_a_batch_is_handed_to_its_writer_stores_each_episode_once(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunStore(tmp_path / "runs")
    writer = store.create_run(target_id="t", name="r", manifest={"design": {}}, hold=True)
    real_put = batches._WriterThread.put

    def put_then_interrupt(self, table, done):  # the batch is the writer thread's, then Ctrl-C
        real_put(self, table, done)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(batches._WriterThread, "put", put_then_interrupt)
    sink = BatchSink(writer, size=4, planned=6, stored=0, errored=0)
    sink.pending.extend(_rows(6))
    sink.account()
    with pytest.raises(KeyboardInterrupt):
        if how == "full batch":
            sink.maybe_flush()
        else:
            sink.flush()
    monkeypatch.setattr(batches._WriterThread, "put", real_put)
    sink.flush()  # what execute_sweep does after the interrupt: write what is still pending
    sink.close()
    assert sink.written == 6
    replicates = sorted(ds.dataset(str(writer.info.episodes_dir), format="parquet").to_table(
        columns=["replicate"]).column("replicate").to_pylist())
    assert replicates == list(range(6))


def test_ctrl_c_while_the_last_batch_is_written_lands_after_it_is_in_place(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs")
    writer = store.create_run(target_id="t", name="r", manifest={"design": {}}, hold=True)
    real_write = writer.write_batch

    def write_then_interrupt(table):  # in the writer thread: the file is in place, then Ctrl-C
        written = real_write(table)
        os.kill(os.getpid(), signal.SIGINT)
        return written

    writer.write_batch = write_then_interrupt  # type: ignore[method-assign]
    sink = BatchSink(writer, size=4, planned=3, stored=0, errored=0)
    sink.pending.extend(_rows(3))
    sink.account()
    with pytest.raises(KeyboardInterrupt):
        sink.flush()  # waits for the write, holding the Ctrl-C until it is done
    assert sink.written == 3 and not sink.pending
    sink.close()
    replicates = sorted(ds.dataset(str(writer.info.episodes_dir), format="parquet").to_table(
        columns=["replicate"]).column("replicate").to_pylist())
    assert replicates == [0, 1, 2]


def test_a_failed_write_is_raised_in_the_sweeps_thread_and_stops_the_writes(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs")
    writer = store.create_run(target_id="t", name="r", manifest={"design": {}}, hold=True)
    calls = []

    def full_disk(table):
        calls.append(table.num_rows)
        raise OSError(28, "No space left on device")

    writer.write_batch = full_disk  # type: ignore[method-assign]
    sink = BatchSink(writer, size=2, planned=6, stored=0, errored=0)
    sink.pending.extend(_rows(2))
    sink.account()
    sink.maybe_flush()  # handed over; the write fails in the writer thread
    sink.pending.extend(_rows(4)[2:])
    sink.account()
    with pytest.raises(OSError, match="No space left"):
        sink.flush()
    with pytest.raises(OSError, match="No space left"):
        sink.flush()  # refused again: no batch is written after a failed one
    sink.close()
    assert calls == [2] and sink.written == 0
    assert not list(writer.info.episodes_dir.glob("*.parquet"))


def test_a_benchmarks_rows_are_written_with_their_conditions_case_id(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs")
    writer = store.create_run(target_id="t", name="r", manifest={"design": {}}, hold=True)
    rows = _rows(4)
    at = ROW_FIELDS.index("case_id")
    own = (*rows[1][:at], "its own", *rows[1][at + 1 :])  # a rollout that gave one keeps it
    bare = [(*row[:at], None, *row[at + 1 :]) for row in (rows[0], rows[2], rows[3])]
    other = ("x=z", '{"x": "z"}', *bare[2][2:])  # a condition the map does not hold
    sink = BatchSink(writer, size=2, planned=4, stored=0, errored=0, case_ids={"x=a": "case a"})
    sink.pending.extend([bare[0], own, bare[1], other])
    sink.account()
    sink.maybe_flush()
    sink.flush()
    writer.release()
    table = ds.dataset(str(writer.info.episodes_dir), format="parquet").to_table()
    replicates, case_ids = table.column("replicate").to_pylist(), table.column("case_id").to_pylist()
    stored = dict(zip(replicates, case_ids, strict=True))
    assert stored == {0: "case a", 1: "its own", 2: "case a", 3: None}
