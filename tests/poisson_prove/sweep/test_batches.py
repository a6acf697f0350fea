"""The batch sink under Ctrl-C: a batch is written once, however late the interrupt lands."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from poisson_prove.store.runs import RunStore
from poisson_prove.store.table import ROW_FIELDS, row_tuple
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
def test_ctrl_c_right_after_a_batch_is_in_place_stores_each_episode_once(tmp_path: Path, how: str) -> None:
    store = RunStore(tmp_path / "runs")
    writer = store.create_run(target_id="t", name="r", manifest={"design": {}}, hold=True)
    real_write = writer.write_batch

    def write_then_interrupt(table):  # the file is renamed into place, then Ctrl-C arrives
        written = real_write(table)
        os.kill(os.getpid(), signal.SIGINT)
        return written

    writer.write_batch = write_then_interrupt  # type: ignore[method-assign]
    sink = BatchSink(writer, size=4, planned=6, stored=0, errored=0)
    sink.pending.extend(_rows(6))
    sink.account()
    with pytest.raises(KeyboardInterrupt):
        if how == "full batch":
            sink.maybe_flush()
        else:
            sink.flush()
    writer.write_batch = real_write  # type: ignore[method-assign]
    sink.flush()  # what execute_sweep does after the interrupt: write what is still pending
    replicates = sorted(ds.dataset(str(writer.info.episodes_dir), format="parquet").to_table(
        columns=["replicate"]).column("replicate").to_pylist())
    assert replicates == list(range(6))


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
