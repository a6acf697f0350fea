"""The agent_calls column: Arrow's reading of the spans texts is the one-by-one reading of each
(parents through steps, a loop in a damaged row, quotes in names, spaced JSON), a row the reader
refuses sends every row the one-by-one way, and a batch file's column reads as the same typed
rows in DuckDB, polars and pyarrow.dataset."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from poisson_prove.store.agent_calls import agent_calls_of, agent_calls_type, calls_of_entries
from poisson_prove.store.table import AGENT_CALLS_DUCKDB_TYPE, tuples_to_table


def _call(name: str, parent: int | None, **attrs: object) -> dict:
    return {"name": name, "source": "monitor", "status": "ok", "parent": parent, "attributes": attrs}


EPISODES = [
    # an agent inside a step inside an agent; a second call of it at the top
    [_call("plan", None, **{"proveai.output_hash": "h1", "proveai.check.json_valid": "good"}),
     {"name": "tool", "source": "step", "parent": 0},
     dict(_call("draft", 1, **{"gen_ai.agent.name": "draft", "proveai.code_hash": "c"}), status="error"),
     _call("plan", None, **{"proveai.output_hash": "h2", 'proveai.check.tone "warm"': "bad"})],
    # a loop of parents (a damaged row), a self parent, one out of range, an otel span naming an agent
    [{"name": "a", "source": "step", "parent": 1}, {"name": "b", "source": "step", "parent": 0},
     _call('qa "x"', 0), _call("self", 3), _call("far", 99),
     {"name": "o", "source": "otel", "attributes": {"gen_ai.agent.name": "o"}}],
    [{"name": "s", "source": "step"}],
    [],
]
TEXTS = [json.dumps(e, separators=(",", ":")) for e in EPISODES] + [None, "", "null"]


def _one_by_one(texts: list) -> list:
    out = []
    for text in texts:
        value = json.loads(text) if text else None
        out.append(calls_of_entries(value) if isinstance(value, list) else None)
    return out


def test_the_arrow_reading_is_the_one_by_one_reading() -> None:
    expected = _one_by_one(TEXTS)
    assert expected[0] is not None and [c["parent"] for c in expected[0]] == [None, 0, None]
    assert [c["parent"] for c in expected[1]] == [None, None, None] and expected[2] is None
    assert expected[0][0]["checks"] == [{"name": "json_valid", "label": "good"}]
    for texts in (TEXTS, [json.dumps(e) for e in EPISODES]):  # compact, then spaced
        assert agent_calls_of(pa.array(texts, pa.string())).to_pylist() == _one_by_one(texts)
    # a label that is not text: the reader refuses it, and every row is read by itself
    odd = json.dumps([_call("plan", None, **{"proveai.check.json_valid": True})])
    refused = agent_calls_of(pa.array([*TEXTS, odd], pa.string())).to_pylist()
    assert refused[:-1] == expected and refused[-1][0]["checks"] == [{"name": "json_valid", "label": "True"}]
    assert agent_calls_of(pa.chunked_array([], pa.string())).to_pylist() == []


def test_the_column_reads_as_typed_rows_in_duckdb_polars_and_pyarrow(tmp_path: Path) -> None:
    row = ("{}", "{}", 0, 7, "ok", 1.0, 2.0, None, "{}", None, None, 1.7e9, 0.1, None)
    table = tuples_to_table("r", [(*row[:2], r, *row[3:13], t) for r, t in enumerate(TEXTS)])
    assert table.schema.field("agent_calls").type == agent_calls_type()
    pq.write_table(table, tmp_path / "batch.parquet")
    expected = _one_by_one(TEXTS)
    glob = str(tmp_path / "*.parquet")
    typed = duckdb.sql(f"select typeof(agent_calls) from read_parquet('{glob}') limit 1").fetchall()
    assert typed == [(AGENT_CALLS_DUCKDB_TYPE,)]
    agents = duckdb.sql(
        f"select replicate, list_transform(agent_calls, lambda c: c.agent), "
        f"list_transform(agent_calls, lambda c: c.parent) from read_parquet('{glob}') order by replicate"
    ).fetchall()
    assert agents == [
        (r, None if e is None else [c["agent"] for c in e], None if e is None else [c["parent"] for c in e])
        for r, e in enumerate(expected)
    ]
    assert pl.read_parquet(glob).get_column("agent_calls").to_list() == expected
    assert ds.dataset(tmp_path, format="parquet").to_table().column("agent_calls").to_pylist() == expected
