"""The whole store read as one dataset by the tools users read with (DuckDB, polars,
pyarrow.dataset), one call each, with the run id as a column; the batch files' key-value
metadata; the spans text as typed rows. Counted both ways, failures per condition equal what
`poisson-prove diff --json` says."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import jsonschema
import polars as pl
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from poisson_prove.store.table import (
    COLUMN_MEANINGS,
    SCHEMA_ID,
    SPANS_DUCKDB_TYPE,
    TABLE_COLUMNS,
    spans_json_schema,
    spans_polars_dtype,
)
from tests.conftest import CLI
from tests.poisson_prove.helpers import small_spec, write

# Each episode records a step around a block (with a list attribute), an instant step and, on
# one seed in three, a step the rollout's exception leaves (status error, with an `error` text).
TRACED_TARGET = """
import random
from poisson_prove import Episode, record, step

def rollout(cfg, seed):
    rng = random.Random(seed)
    with step("plan", x=cfg["x"]) as attrs:
        attrs["draws"] = [rng.randint(0, 9), rng.randint(0, 9)]
    record("tool", ok=True)
    if seed % 3 == 0:
        with step("flaky"):
            raise RuntimeError("tool down")
    return Episode("bad" if rng.random() < 0.3 else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """Two paired runs (one written in batches of 7 rows), a foreign file at the root, and the
    tool's own comparison of them."""
    root = tmp_path_factory.mktemp("dataset")
    work, home = root / "work", root / "home"
    work.mkdir()
    home.mkdir()
    write(work, "agent.py", TRACED_TARGET)
    small_spec(work, replicates=30)
    prove = CLI("poisson-prove", work, home)
    for extra in (["--batch-size", "7"], ["--pair-with", "latest"]):
        done = prove("--store", "runs", "sweep", "prove.toml", "--yes", "--max-mde", "1", *extra)
        assert done.returncode in (0, 3), done.stderr
    (work / "runs" / "dashboard.html").write_text("<html></html>")  # what `dashboard` leaves there
    compared = prove("--store", "runs", "diff", "--json")
    assert compared.returncode in (0, 1), compared.stderr
    return work / "runs", json.loads(compared.stdout)


def _tool_counts(diff: dict) -> Counter:
    """(run id, condition key) -> failures, as poisson-prove's own comparison counts them."""
    counts: Counter = Counter()
    for condition in diff["conditions"]:
        for outcome in condition["outcomes"]:
            for side in ("before", "after"):
                counts[(diff[side]["run_id"], condition["key"])] += outcome[side]["k"]
    return counts


def test_duckdb_polars_and_pyarrow_read_the_store_in_one_call_each(store: tuple[Path, dict]) -> None:
    root, diff = store
    expected = _tool_counts(diff)
    assert len({run for run, _ in expected}) == 2 and sum(expected.values()) > 0

    glob = str(root / "*" / "episodes" / "*.parquet")
    by_duckdb = duckdb.sql(
        "select run_id, cell, count(*) filter (where outcome = 'bad') "
        f"from read_parquet('{glob}') group by all"
    ).fetchall()
    assert Counter({(run, cell): k for run, cell, k in by_duckdb}) == expected

    by_polars = (
        pl.read_parquet(glob)
        .group_by("run_id", "cell")
        .agg((pl.col("outcome") == "bad").sum().alias("k"))
        .iter_rows()
    )
    assert Counter({(run, cell): k for run, cell, k in by_polars}) == expected

    # The store root itself: manifest.json, events.jsonl and dashboard.html are not Parquet
    # and are left out; the lock files' leading dot keeps them out of the listing.
    table = ds.dataset(root, format="parquet", exclude_invalid_files=True).to_table()
    assert table.column_names == list(TABLE_COLUMNS)
    rows = zip(table.column("run_id").to_pylist(), table.column("cell").to_pylist(),
               table.column("outcome").to_pylist(), strict=True)
    assert Counter((run, cell) for run, cell, outcome in rows if outcome == "bad") == +expected
    assert table.num_rows == diff["before"]["done"] + diff["after"]["done"]


def test_every_batch_file_says_its_schema_run_and_column_meanings(store: tuple[Path, dict]) -> None:
    root, _ = store
    files = sorted(root.glob("*/episodes/*.parquet"))
    assert len(files) >= 2  # a complete run is one compacted file (store.compaction)
    for path in files:
        metadata = {k.decode(): v.decode() for k, v in pq.read_schema(path).metadata.items()}
        assert metadata["poisson_prove.schema"] == SCHEMA_ID
        assert metadata["poisson_prove.run_id"] == path.parent.parent.name
        meanings = json.loads(metadata["poisson_prove.columns"])
        assert list(meanings) == pq.read_schema(path).names == list(TABLE_COLUMNS)
        assert all(isinstance(text, str) and text for text in meanings.values())
        assert json.loads(metadata["poisson_prove.spans_schema"]) == spans_json_schema()
        assert metadata["poisson_prove.spans_duckdb"] == SPANS_DUCKDB_TYPE
    # DuckDB reads the same key-value pairs (an independent reader of the footer).
    pairs = dict(duckdb.sql(f"select key, value from parquet_kv_metadata('{files[0]}')").fetchall())
    assert pairs[b"poisson_prove.run_id"].decode() == files[0].parent.parent.name
    assert set(COLUMN_MEANINGS) == set(TABLE_COLUMNS)


def test_the_spans_text_reads_as_typed_rows_in_duckdb_and_polars(store: tuple[Path, dict]) -> None:
    root, _ = store
    glob = str(root / "*" / "episodes" / "*.parquet")
    texts = [row[0] for row in duckdb.sql(f"select spans from read_parquet('{glob}')").fetchall()]
    entries = [entry for text in texts for entry in json.loads(text)]
    for text in texts:
        jsonschema.validate(json.loads(text), spans_json_schema())
    expected = Counter((e["name"], e["status"], e["parent"], e.get("error")) for e in entries)
    assert expected[("flaky", "error", None, "RuntimeError: tool down")] > 0

    typed = duckdb.sql(
        f"select s.name, s.status, s.parent, s.error, s.start, s.attributes from "
        f"(select unnest(from_json(spans, '{SPANS_DUCKDB_TYPE}')) as s from read_parquet('{glob}'))"
    ).fetchall()
    assert Counter(row[:4] for row in typed) == expected
    assert all(isinstance(row[4], float) for row in typed)
    plans = [json.loads(row[5]) for row in typed if row[0] == "plan"]
    assert plans and all(len(attrs["draws"]) == 2 for attrs in plans)

    frame = (
        pl.read_parquet(glob, columns=["spans"])
        .with_columns(pl.col("spans").str.json_decode(spans_polars_dtype()))
        .explode("spans")
        .unnest("spans")
    )
    assert frame.schema["start"] == pl.Float64 and frame.schema["parent"] == pl.Int64
    assert Counter(frame.select("name", "status", "parent", "error").iter_rows()) == expected
