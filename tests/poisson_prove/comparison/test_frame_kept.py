"""read_frame keeps the last runs it read while their batch files are unchanged (diff reads
both runs again to attribute), and reads a run again once a batch file changes or lands."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from poisson_prove.comparison import frame
from poisson_prove.store.runs import RunStore
from tests.poisson_prove.runs import Episodes, write_run


def _episodes(outcome: str) -> Episodes:
    episodes = Episodes()
    for r in range(10):
        episodes.add({"ticket": "refund"}, r, outcome, 3.0, 20.0)
    return episodes


def test_a_run_is_read_again_once_its_batches_change(tmp_path: Path, monkeypatch) -> None:
    reads = []
    real = frame._read_frame
    monkeypatch.setattr(frame, "_read_frame", lambda info: reads.append(info.run_id) or real(info))
    store = tmp_path / "store"
    info = write_run(store, _episodes("resolved"), axes=("ticket",), batches=1)
    first = frame.read_frame(info)
    again = RunStore(store).resolve(info.run_id)
    second = frame.read_frame(again)
    assert reads == [info.run_id] and second.info is again  # kept, with the run as resolved now
    assert second.outcome.values == first.outcome.values
    (path,) = again.batch_files()
    table = pq.read_table(path)
    at = table.schema.get_field_index("outcome")
    column = pa.array(["unresolved"] * table.num_rows, pa.string()).cast(table.schema.field(at).type)
    table = table.set_column(at, table.schema.field(at), column)
    pq.write_table(table, path)
    third = frame.read_frame(RunStore(store).resolve(info.run_id))
    assert reads == [info.run_id, info.run_id] and third.outcome.values == ("unresolved",)
