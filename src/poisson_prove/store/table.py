"""The episode table: the store's columns, their Arrow schema, and rows turned into tables.

A row comes in two shapes: a dict keyed by column (what `execute.run_episode` and every backend
return) and a tuple in `ROW_FIELDS` order (the in-process fast path, without a dict per
episode). Both become one Arrow table per batch here. pyarrow is imported on first use, so that
commands which never read or write a batch (a refused sweep, --help) do not pay for it.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from poisson_prove.episode.row import (
    EPISODE_COLUMNS,
    ERROR_KIND_AT,
    ERROR_MESSAGE_AT,
    OUTCOME_AT,
    ROW_FIELDS,
)
from poisson_prove.store.agent_calls import AGENT_CALL_FIELDS, agent_calls_of, agent_calls_type

#: Text every spans value holding an agent call contains (a fast test before the real one).
MONITOR_TEXT = '"monitor"'

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "AGENT_CALLS_DUCKDB_TYPE",
    "COLUMN_MEANINGS",
    "DERIVED_COLUMNS",
    "DICTIONARY_COLUMNS",
    "EPISODE_COLUMNS",
    "ERROR_KIND_AT",
    "ERROR_MESSAGE_AT",
    "OUTCOME_AT",
    "ROW_FIELDS",
    "SCHEMA_ID",
    "SPANS_DUCKDB_TYPE",
    "SPAN_FIELDS",
    "STATISTICS_COLUMNS",
    "TABLE_COLUMNS",
    "batch_metadata",
    "columns_to_table",
    "episode_schema",
    "prepare_conversion",
    "rows_to_table",
    "spans_json_schema",
    "spans_polars_dtype",
    "tuples_to_table",
]


#: The columns derived from a row's own when its batch's table is built (not in a row tuple or
#: dict): `agent_calls`, the agent calls of `spans` typed (store.agent_calls).
DERIVED_COLUMNS = ("agent_calls",)
#: Every column of a batch file, in order: the row's, then the derived ones.
TABLE_COLUMNS = (*EPISODE_COLUMNS, *DERIVED_COLUMNS)

#: The text columns stored dictionary-encoded, and read back so (a condition, an outcome, an
#: error kind become small integer codes): one declaration for the writer and every reader.
DICTIONARY_COLUMNS = ("run_id", "cell", "cfg", "outcome", "case_id", "meta", "error_kind", "error_message")
#: The columns whose Parquet statistics are kept, where readers filter.
STATISTICS_COLUMNS = ("cell", "replicate", "seed", "outcome", "error_kind", "started_at")

_SCHEMA: list[Any] = []
#: Rows of a process built column by column before Arrow's own conversion takes over (its
#: first use imports pandas): more than a small sweep writes, a few hundredths of a second.
_BY_HAND_ROWS = 20_000
#: How many rows this process has built by hand.
_BY_HAND = [0]
#: The most bytes one Arrow string array's 32-bit offsets reach.
_MAX_TEXT_BYTES = 2**31 - 1

#: The id of the episode table's layout, in every batch file's metadata (`poisson_prove.schema`).
#: /2 added `agent_calls`; a run stored as /1 (without it) is read too: the attribution derives
#: the agent calls from `spans` there (poisson_prove.comparison.twins).
SCHEMA_ID = "poisson-prove.episodes/2"
#: The prefix of the store's own Parquet key-value metadata keys.
METADATA_PREFIX = "poisson_prove."

#: What each column means, as the batch files' metadata says it (`poisson_prove.columns`).
COLUMN_MEANINGS: dict[str, str] = {
    "run_id": "the run's id: the same in every row of a batch, and the run's folder name",
    "cell": "the condition's canonical key: its cfg as compact JSON with sorted keys",
    "cfg": "the condition's cfg as JSON (the same canonical text as cell)",
    "replicate": "0-based replicate of the condition",
    "seed": "the episode's seed, derived from the run's salt, cell and replicate",
    "outcome": "how the episode ended; null when it errored or timed out",
    "t": "when it ended, in the run's t_unit; null when errored",
    "horizon": "the most t could have been; null when errored",
    "case_id": "meta's case_id as text, if given",
    "meta": "the episode's meta as JSON",
    "error_kind": "why the episode has no outcome: the exception's type name, system_exit, "
    "invalid_episode, episode_timeout, process_exit or infrastructure; null when it ended",
    "error_message": "the first 2,000 characters of the error",
    "started_at": "when the call started (UTC)",
    "duration_s": "how long the call took, in seconds",
    "spans": "JSON list of the episode's steps, captured spans and injected faults "
    "(null when none); each entry as poisson_prove.spans_schema says",
    "agent_calls": "the proveai @monitor agent calls among spans, in call order, typed: "
    + "; ".join(f"{name}: {meaning}" for name, (_, meaning) in AGENT_CALL_FIELDS.items())
    + " (null when none)",
}

#: The `agent_calls` column's type in DuckDB's words (what its `typeof(agent_calls)` says).
AGENT_CALLS_DUCKDB_TYPE = (
    "STRUCT(" + ", ".join(f"{name} {duck}" for name, (duck, _) in AGENT_CALL_FIELDS.items()) + ")[]"
)

#: The fields of one `spans` entry: name -> (JSON Schema type, DuckDB type, meaning). The entry's
#: `attributes` have keys of their own per span, so they stay JSON (DuckDB's JSON type).
SPAN_FIELDS: dict[str, tuple[Any, str, str]] = {
    "name": ("string", "VARCHAR", "the step's, span's or fault's name"),
    "source": ("string", "VARCHAR", "step (the rollout's own), otel (captured), chaos (an injected fault) "
               "or prove (the run's accounting)"),
    "status": ("string", "VARCHAR", "ok or error"),
    "start": (["number", "null"], "DOUBLE", "epoch seconds"),
    "end": (["number", "null"], "DOUBLE", "epoch seconds; null while a step never closed"),
    "parent": (["integer", "null"], "BIGINT", "the index in this list of the enclosing step"),
    "error": (["string", "null"], "VARCHAR", "what went wrong, when status is error"),
    "span_id": (["string", "null"], "VARCHAR", "the span's id, 16 hex digits, when it has one"),
    "trace_id": (["string", "null"], "VARCHAR", "its trace's id, 32 hex digits, when it has one"),
    "attributes": ("object", "JSON", "the span's attributes: key -> a JSON value"),
}

#: The `spans` text's structure for DuckDB's from_json: typed rows in one call,
#: `unnest(from_json(spans, '<SPANS_DUCKDB_TYPE>'), recursive := true)`.
SPANS_DUCKDB_TYPE = json.dumps(
    [{name: duck for name, (_, duck, _) in SPAN_FIELDS.items()}], separators=(",", ":")
)


def spans_json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of the `spans` text: a list of entries, SPAN_FIELDS each."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "poisson-prove.spans/1",
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name", "source", "status", "start", "end", "parent", "attributes"],
            "properties": {
                name: {"type": kind, "description": meaning}
                for name, (kind, _, meaning) in SPAN_FIELDS.items()
            },
        },
    }


def spans_polars_dtype() -> Any:
    """The polars dtype that `pl.col("spans").str.json_decode(...)` reads the spans text with:
    a list of structs of SPAN_FIELDS' typed fields (`attributes`, whose keys vary, is left out:
    polars has no JSON type; DuckDB keeps it). Needs polars installed."""
    import polars as pl  # polars: the user's reader, imported only when its dtype is asked for

    types = {"VARCHAR": pl.String, "DOUBLE": pl.Float64, "BIGINT": pl.Int64}
    fields = {name: types[duck] for name, (_, duck, _) in SPAN_FIELDS.items() if duck in types}
    return pl.List(pl.Struct(fields))


def batch_metadata(run_id: str, version: str) -> dict[str, str]:
    """A batch file's Parquet key-value metadata: the schema's id, the run, the writer's version,
    the columns' meanings and the spans entries' JSON Schema (values are JSON text or plain)."""
    return {
        f"{METADATA_PREFIX}schema": SCHEMA_ID,
        f"{METADATA_PREFIX}run_id": run_id,
        f"{METADATA_PREFIX}version": version,
        f"{METADATA_PREFIX}columns": json.dumps(COLUMN_MEANINGS, ensure_ascii=False),
        f"{METADATA_PREFIX}spans_schema": json.dumps(spans_json_schema(), ensure_ascii=False),
        f"{METADATA_PREFIX}spans_duckdb": SPANS_DUCKDB_TYPE,
    }


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
                    pa.field("agent_calls", agent_calls_type()),
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


def columns_to_table(columns: Mapping[str, Sequence[Any]]) -> pa.Table:
    """A mapping of column lists -> one table in the store's schema; a derived column left out
    (DERIVED_COLUMNS) is derived from the row's own, as `tuples_to_table` does."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    given = dict(columns)
    if "agent_calls" not in given and "spans" in given:
        given["agent_calls"] = agent_calls_of(pa.array(list(given["spans"]), pa.string()))
    return pa.table(given, schema=episode_schema())


def rows_to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Row dicts -> one Arrow table in the store's schema (all rows of one run)."""
    if not rows:
        return episode_schema().empty_table()
    return tuples_to_table(str(rows[0]["run_id"]), [row_tuple(row) for row in rows])


def tuples_to_table(run_id: str, rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    """Row tuples (ROW_FIELDS order, started_at as float epoch seconds) -> one table.

    Two ways to the same arrays, value for value (tests/poisson_prove/store/test_table.py holds
    them equal, schema and Parquet bytes too). Arrow's own conversion of the rows (a list of
    tuples read as a struct array) is the fastest per row, but the first `pa.array` of Python
    values makes pyarrow import pandas (~0.3 s, to ask whether they are a pandas object). So
    the first `_BY_HAND_ROWS` rows of a process are built column by column without it (text
    over its UTF-8 bytes, numbers over NumPy buffers: a few microseconds more per row), and
    after them, or once pandas is loaded anyway, Arrow converts: a small sweep never pays for
    pandas and a large one pays for it once, as before. started_at becomes whole microseconds
    rounded half to even either way.
    """
    by_arrow = "pandas" in sys.modules or _BY_HAND[0] + len(rows) > _BY_HAND_ROWS
    if not by_arrow:
        _BY_HAND[0] += len(rows)
    return (_by_arrow if by_arrow else _by_hand)(run_id, rows)


def prepare_conversion(run_id: str, rows: int) -> None:
    """Load what converting `rows` more rows of this process will load (pyarrow's shims; pandas
    too when they take the process past `_BY_HAND_ROWS`, to Arrow's own conversion), so that a
    sweep's clock, started after this, times its episodes and not a module's import; and
    pyarrow.parquet, which writing them loads."""
    import pyarrow.parquet  # noqa: F401  (pyarrow: ~0.3 s, loaded here, not for a refused sweep)

    tuples_to_table(run_id, [])
    if _BY_HAND[0] + rows > _BY_HAND_ROWS:
        _by_arrow(run_id, [])


def _by_arrow(run_id: str, rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    """Arrow's own conversion of the row tuples, read as one struct array."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are written
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    schema = episode_schema()
    fields = list(schema)[1 : len(EPISODE_COLUMNS)]
    count = len(rows)
    row_type = pa.struct(
        [pa.field(f.name, pa.float64() if f.name == "started_at" else f.type) for f in fields]
    )
    arrays = [pa.repeat(pa.scalar(run_id, pa.string()), count)]
    for field, column in zip(fields, pa.array(rows, type=row_type).flatten(), strict=True):
        if field.name == "started_at":
            validity, data = column.buffers()
            seconds = np.frombuffer(data, dtype=np.float64, count=column.offset + count)
            valid = None
            if validity is not None:
                bits = np.frombuffer(validity, dtype=np.uint8)
                valid = np.unpackbits(bits, count=column.offset + count, bitorder="little").astype(np.bool_)
            column = _timestamps(pa, np, field.type, valid, seconds).slice(column.offset)
        arrays.append(column)
    arrays.append(agent_calls_of(arrays[-1]))
    return pa.Table.from_arrays(arrays, schema=schema)


def _by_hand(run_id: str, rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    """The same table built column by column, never through `pa.array` or `pa.scalar`."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are written
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    schema = episode_schema()
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in ROW_FIELDS]
    arrays = [pa.repeat(_strings(pa, np, [run_id])[0], len(rows))]
    for field, column in zip(list(schema)[1 : len(EPISODE_COLUMNS)], columns, strict=True):
        if pa.types.is_string(field.type):
            arrays.append(_strings(pa, np, column))
        elif field.name == "started_at":
            arrays.append(_timestamps(pa, np, field.type, *_numbers(np, column, np.float64)))
        else:
            valid, values = _numbers(np, column, np.dtype(str(field.type)))  # int32, int64, double
            arrays.append(_from_buffers(pa, np, field.type, valid, values))
    # from the spans column just built; a batch without agents needs no pyarrow.compute
    monitored = any(text is not None and MONITOR_TEXT in text for text in columns[-1])
    arrays.append(agent_calls_of(arrays[-1]) if monitored else pa.nulls(len(rows), agent_calls_type()))
    return pa.Table.from_arrays(arrays, schema=schema)


def _timestamps(pa: Any, np: Any, arrow_type: pa.DataType, valid: Any, seconds: Any) -> pa.Array:
    """Epoch seconds (valid where `valid`, or everywhere when None) as a timestamp array of
    whole microseconds, rounded half to even; a NaN or infinite moment is refused."""
    present = seconds if valid is None else seconds[valid]
    if not np.isfinite(present).all():
        raise ValueError("started_at must be a finite moment")
    with np.errstate(invalid="ignore"):  # a null's slot may hold anything
        micros = np.round(seconds * 1e6).astype(np.int64)
    return _from_buffers(pa, np, pa.int64(), valid, micros).view(arrow_type)


def _strings(pa: Any, np: Any, column: Sequence[Any]) -> pa.Array:
    """A text column (None -> null) over its UTF-8 bytes and their offsets."""
    count = len(column)
    try:
        encoded = [b"" if value is None else value.encode() for value in column]
    except AttributeError:
        odd = next(value for value in column if value is not None and not isinstance(value, str))
        raise TypeError(f"a text column holds a {type(odd).__name__}: {odd!r}") from None
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=count))
    if count and ends[-1] > _MAX_TEXT_BYTES:
        raise ValueError(f"a text column of {ends[-1]:,} bytes: more than one Arrow string array holds")
    offsets = np.zeros(count + 1, dtype=np.int32)
    offsets[1:] = ends
    valid = None if None not in column else np.fromiter(
        (value is not None for value in column), dtype=np.bool_, count=count
    )
    return _from_buffers(pa, np, pa.string(), valid, offsets, pa.py_buffer(b"".join(encoded)))


def _numbers(np: Any, column: Sequence[Any], dtype: Any) -> tuple[Any, Any]:
    """A number column as (valid mask or None when no value is null, values with 0 for nulls)."""
    if None not in column:
        return None, np.fromiter(column, dtype=dtype, count=len(column))
    valid = np.fromiter((value is not None for value in column), dtype=np.bool_, count=len(column))
    values = np.fromiter((0 if value is None else value for value in column), dtype=dtype, count=len(column))
    return valid, values


def _from_buffers(
    pa: Any, np: Any, arrow_type: pa.DataType, valid: Any, values: Any, data: Any = None
) -> pa.Array:
    """An Arrow array over NumPy's values (a string array's offsets, with `data` its bytes),
    its validity bitmap packed from `valid` (None: no value is null)."""
    buffers = [pa.py_buffer(values)] if data is None else [pa.py_buffer(values), data]
    count = len(values) - (data is not None)
    if valid is None:
        return pa.Array.from_buffers(arrow_type, count, [None, *buffers], null_count=0)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    nulls = count - int(np.count_nonzero(valid))
    return pa.Array.from_buffers(arrow_type, count, [bitmap, *buffers], null_count=nulls)
