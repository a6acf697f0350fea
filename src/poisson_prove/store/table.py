"""The episode table: the store's columns, their Arrow schema, and rows turned into tables.

A row comes in two shapes: a dict keyed by column (what `execute.run_episode` and every backend
return) and a tuple in `ROW_FIELDS` order (the in-process fast path, without a dict per
episode). Both become one Arrow table per batch here. pyarrow is imported on first use, so that
commands which never read or write a batch (a refused sweep, --help) do not pay for it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from poisson_prove.episode.row import (
    EPISODE_COLUMNS,
    ERROR_KIND_AT,
    ERROR_MESSAGE_AT,
    OUTCOME_AT,
    ROW_FIELDS,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "DICTIONARY_COLUMNS",
    "EPISODE_COLUMNS",
    "ERROR_KIND_AT",
    "ERROR_MESSAGE_AT",
    "OUTCOME_AT",
    "ROW_FIELDS",
    "STATISTICS_COLUMNS",
    "episode_schema",
    "rows_to_table",
    "tuples_to_table",
]


#: The text columns stored dictionary-encoded, and read back so (a condition, an outcome, an
#: error kind become small integer codes): one declaration for the writer and every reader.
DICTIONARY_COLUMNS = ("run_id", "cell", "cfg", "outcome", "case_id", "meta", "error_kind", "error_message")
#: The columns whose Parquet statistics are kept, where readers filter.
STATISTICS_COLUMNS = ("cell", "replicate", "seed", "outcome", "error_kind", "started_at")

_SCHEMA: list[Any] = []


def episode_schema() -> pa.Schema:
    """The Arrow schema of an episode row."""
    if not _SCHEMA:
        import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

        _SCHEMA.append(
            pa.schema(
                [
                    pa.field("run_id", pa.string(), nullable=False),
                    pa.field("cell", pa.string(), nullable=False),
                    pa.field("cfg", pa.string(), nullable=False),
                    pa.field("replicate", pa.int32(), nullable=False),
                    pa.field("seed", pa.int64(), nullable=False),
                    pa.field("outcome", pa.string()),
                    pa.field("t", pa.float64()),
                    pa.field("horizon", pa.float64()),
                    pa.field("case_id", pa.string()),
                    pa.field("meta", pa.string()),
                    pa.field("error_kind", pa.string()),
                    pa.field("error_message", pa.string()),
                    pa.field("started_at", pa.timestamp("us", tz="UTC")),
                    pa.field("duration_s", pa.float64()),
                    pa.field("spans", pa.string()),
                ]
            )
        )
    return _SCHEMA[0]


def epoch_seconds(value: Any) -> float | None:
    """A started_at value (float or int epoch seconds, a datetime, ISO text) as epoch seconds;
    a naive moment is read as UTC."""
    if value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dt.datetime):
        moment = value
    else:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).timestamp()


def row_tuple(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """A row dict (run_episode's) as a row tuple in ROW_FIELDS order, started_at as epoch seconds."""
    return tuple(
        epoch_seconds(row.get(name)) if name == "started_at" else row.get(name) for name in ROW_FIELDS
    )


def rows_to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Row dicts -> one Arrow table in the store's schema (all rows of one run)."""
    if not rows:
        return episode_schema().empty_table()
    return tuples_to_table(str(rows[0]["run_id"]), [row_tuple(row) for row in rows])


def tuples_to_table(run_id: str, rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    """Row tuples (ROW_FIELDS order, started_at as float epoch seconds) -> one table.

    Converted in one pass by Arrow itself (a list of tuples read as a struct array): the hot
    path of a large in-process sweep.
    """
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written
    import pyarrow.compute as pc  # pyarrow: ~160 ms, only when episodes are read or written

    schema = episode_schema()
    fields = list(schema)[1:]
    row_type = pa.struct(
        [pa.field(f.name, pa.float64() if f.name == "started_at" else f.type) for f in fields]
    )
    rows_array = pa.array(rows, type=row_type)
    arrays = [pa.repeat(pa.scalar(run_id, pa.string()), len(rows))]
    for field, column in zip(fields, rows_array.flatten(), strict=True):
        if field.name == "started_at":
            micros = pc.cast(pc.round(pc.multiply(column, 1e6)), pa.int64())
            column = micros.cast(field.type)
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=schema)
