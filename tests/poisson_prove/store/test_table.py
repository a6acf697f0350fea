"""Rows turned into the store's Arrow table: every column kept, started_at in any of its accepted
shapes landing on the same UTC microsecond, read back from Parquet with DuckDB."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from poisson_prove.store.table import (
    TABLE_COLUMNS,
    episode_schema,
    rows_to_table,
)

MOMENT = dt.datetime(2026, 3, 14, 15, 9, 26, 535897, tzinfo=dt.UTC)
STARTED = [
    MOMENT.timestamp(),  # float epoch seconds
    MOMENT,  # an aware datetime
    MOMENT.replace(tzinfo=None),  # a naive one, read as UTC
    "2026-03-14T15:09:26.535897Z",  # ISO text
    MOMENT.astimezone(dt.timezone(dt.timedelta(hours=-5))),  # the same moment elsewhere
]


def _row(replicate: int, started_at: object) -> dict[str, object]:
    return {
        "run_id": "run-1", "cell": "c1", "cfg": '{"p": 0.5}', "replicate": replicate,
        "seed": 2**62 + replicate, "outcome": "resolved" if replicate % 2 else None,
        "t": 1.5 * replicate, "horizon": 10.0, "case_id": "refund", "meta": '{"k": "é"}',
        "error_kind": None if replicate % 2 else "exception", "error_message": None,
        "started_at": started_at, "duration_s": 0.25, "spans": None,
    }


def test_rows_read_back_with_duckdb_with_one_utc_moment(tmp_path: Path) -> None:
    rows = [_row(r, started) for r, started in enumerate(STARTED)]
    table = rows_to_table(rows)
    assert table.schema == episode_schema() and table.column_names == list(TABLE_COLUMNS)
    pq.write_table(table, tmp_path / "batch.parquet")
    with duckdb.connect() as db:
        db.execute("SET TimeZone = 'UTC'")
        read = db.execute(
            f"SELECT * FROM read_parquet('{tmp_path / 'batch.parquet'}') ORDER BY replicate"
        ).fetchall()
    assert len(read) == len(rows)
    for got, row in zip(read, rows, strict=True):
        record = dict(zip(TABLE_COLUMNS, got, strict=True))
        assert record.pop("started_at") == MOMENT
        assert record.pop("agent_calls") is None  # these rows' spans hold no agent call
        expected = {k: v for k, v in row.items() if k != "started_at"}
        assert record == expected


def test_no_rows_make_an_empty_table_in_the_schema() -> None:
    empty = rows_to_table([])
    assert empty.num_rows == 0 and empty.schema == episode_schema()
