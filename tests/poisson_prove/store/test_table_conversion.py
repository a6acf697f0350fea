"""Row tuples become the same table both ways `tuples_to_table` has (column by column, and
Arrow's own conversion), equal to the conversion the store used before either: every value,
null and NaN, the schema, and the Parquet bytes written from it. A fresh process converting a
small batch imports neither pandas nor pyarrow.compute. The derived `agent_calls` column is each
row's agent calls as the one-by-one reading of its spans gives them."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from poisson_prove.store import table
from poisson_prove.store.agent_calls import agent_calls_type, calls_of_entries
from poisson_prove.store.table import DICTIONARY_COLUMNS, EPISODE_COLUMNS, episode_schema


def _reference(run_id: str, rows: list[tuple[Any, ...]]) -> pa.Table:
    """The conversion the store used before (Arrow's, started_at through pyarrow.compute)."""
    fields = list(episode_schema())[1 : len(EPISODE_COLUMNS)]
    row_type = pa.struct(
        [pa.field(f.name, pa.float64() if f.name == "started_at" else f.type) for f in fields]
    )
    arrays = [pa.repeat(pa.scalar(run_id, pa.string()), len(rows))]
    for field, column in zip(fields, pa.array(rows, type=row_type).flatten(), strict=True):
        if field.name == "started_at":
            column = pc.cast(pc.round(pc.multiply(column, 1e6)), pa.int64()).cast(field.type)
        arrays.append(column)
    spans = [row[-1] for row in rows]
    calls = [None if text is None else calls_of_entries(json.loads(text)) for text in spans]
    arrays.append(pa.array(calls, type=agent_calls_type()))
    return pa.Table.from_arrays(arrays, schema=episode_schema())


# a step, then two agent calls inside it, the second labelled by a check
MONITORED = json.dumps([
    {"name": "turn", "source": "step", "parent": None},
    {"name": "draft", "source": "monitor", "parent": 0, "status": "ok",
     "attributes": {"gen_ai.agent.name": "draft", "proveai.output_hash": "h1", "proveai.code_hash": "c"}},
    {"name": "qa", "source": "monitor", "parent": 1, "status": "error",
     "attributes": {"proveai.check.json_valid": "bad", "proveai.prompt_hash": "p"}},
], separators=(",", ":"))


def _rows(count: int) -> list[tuple[Any, ...]]:
    rows = []
    for i in range(count):
        errored = i % 7 == 0
        rows.append((
            f'{{"x":"c{i % 3}"}}', f'{{"x":"c{i % 3}"}}', i // 3, 2**62 + i if i % 2 else -i,
            None if errored else ("ok" if i % 5 else "bad"),
            None if errored else i * 0.37, None if errored else 5.0 + i,
            None if i % 4 else "case é", '{"k":"ünï ☃ 𝄞"}' if i % 2 else "{}",
            "ValueError" if errored else None, "boom \x00 é" if errored else None,
            # half a microsecond lands on the even one, as pc.round did; a missing moment is null
            None if i == 3 else 1_700_000_000 + i * 0.0000005 + i / 7,
            math.nan if i == 4 else (0 if i == 6 else i / 1000),  # a NaN stays NaN, an int a float
            None if i % 2 else '[{"name":"x","source":"step"}]' if i % 4 else MONITORED,
        ))
    return rows


def _values(tab: pa.Table, name: str) -> list[Any]:
    """A column's values with each NaN as the text "nan" (NaN equals nothing, itself included)."""
    return ["nan" if isinstance(v, float) and math.isnan(v) else v for v in tab.column(name).to_pylist()]


def _parquet(tab: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(tab, sink, use_dictionary=list(DICTIONARY_COLUMNS), compression="zstd")
    return sink.getvalue()


@pytest.mark.parametrize("count", [0, 1, 2, 13, 300])
def test_both_ways_make_the_tables_the_store_wrote_before(count: int) -> None:
    rows = _rows(count)
    before = _reference("run-1", rows)
    for way in (table._by_hand, table._by_arrow):
        made = way("run-1", rows)
        assert made.schema.equals(before.schema, check_metadata=True)
        for name in before.column_names:
            assert _values(made, name) == _values(before, name), (way.__name__, name)
            assert made.column(name).null_count == before.column(name).null_count
        assert _parquet(made) == _parquet(before), way.__name__
        read = pq.read_table(io.BytesIO(_parquet(made)))  # an independent reader of the bytes
        assert all(_values(read, name) == _values(before, name) for name in before.column_names)


def test_a_slice_and_a_wrong_value_are_handled_alike() -> None:
    rows = _rows(40)
    assert table._by_hand("r", rows[5:17]).equals(_reference("r", rows)[5:17].cast(episode_schema()))
    bad = [(*rows[1][:4], 7, *rows[1][5:])]  # an int where the outcome text goes
    with pytest.raises(TypeError):
        table._by_hand("r", bad)
    with pytest.raises((TypeError, pa.ArrowTypeError, pa.ArrowInvalid)):
        _reference("r", bad)
    infinite = [(*rows[1][:11], math.inf, *rows[1][12:])]
    with pytest.raises(ValueError, match="started_at"):
        table._by_hand("r", infinite)
    with pytest.raises(ValueError, match="started_at"):
        table._by_arrow("r", infinite)


CHILD = """
import sys
from poisson_prove.store.table import tuples_to_table
row = ('{}', '{}', 0, 7, None, None, None, None, '{}', 'ValueError', 'boom', 1.7e9, 0.1, None)
made = tuples_to_table("run-1", [row, (*row[:4], "ok", 1.0, 2.0, *row[7:])] * 250)
assert made.num_rows == 500 and made.column("outcome").null_count == 250
"""


def test_a_small_batch_imports_neither_pandas_nor_pyarrow_compute() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", CHILD], capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    imported = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    assert "pyarrow.lib" in imported  # the log is real
    assert not {"pandas", "pyarrow.compute"} & imported
