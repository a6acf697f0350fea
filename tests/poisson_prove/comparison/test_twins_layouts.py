"""The attribution reads the same from every layout of a store: the `agent_calls` column
(poisson-prove.episodes/2), the `spans` of runs written before it (/1: the column derived from
them), a run with files of both (a /1 run resumed by this version), and a run's batches merged
into one file of several row groups. Two paired runs of the pipeline example, swept once by the
installed script; `diff --json` on each copy of the store must say the very same attribution."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import CLI

PATCHED = "poisson_prove.examples.mock_pipeline:rollout_patched"


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("layouts")
    (root / "home").mkdir()
    (root / "work").mkdir()
    prove = CLI("poisson-prove", root / "work", root / "home")
    assert prove("init", "--example", "pipeline").returncode == 0
    for args in (("--name", "before"), ("--name", "after", "--target", PATCHED, "--pair-with", "before")):
        done = prove("--store", "runs", "sweep", "--yes", "--replicates", "120", "--batch-size", "50",
                     "--max-mde", "0.5", *args)
        assert done.returncode == 0, done.stderr
    return root, root / "work" / "runs"


def _v1(table: pa.Table) -> pa.Table:
    """A batch as this store wrote it before agent_calls: without the column, its metadata
    saying /1."""
    metadata = dict(table.schema.metadata)
    metadata[b"poisson_prove.schema"] = b"poisson-prove.episodes/1"
    meanings = json.loads(metadata[b"poisson_prove.columns"])
    meanings.pop("agent_calls")
    metadata[b"poisson_prove.columns"] = json.dumps(meanings).encode()
    return table.drop_columns(["agent_calls"]).replace_schema_metadata(metadata)


def _relaid(store: Path, copy: Path, layout: str) -> None:
    """The store copied with each run's episodes (read whole, in the order the store lists
    them) written again: in files of 50 rows, each /2 or /1 or every other one /1, or in one
    file of row groups of 70 rows."""
    shutil.copytree(store, copy)
    for episodes in copy.glob("*/episodes"):
        files = sorted(episodes.glob("*.parquet"))
        table = pa.concat_tables([pq.read_table(f) for f in files])
        for f in files:
            f.unlink()
        if layout == "row groups":
            pq.write_table(table, episodes / "batch-000001-000000.parquet", row_group_size=70)
            continue
        for n, start in enumerate(range(0, table.num_rows, 50)):
            part = table.slice(start, 50)
            if layout == "v1" or (layout == "mixed" and n % 2):
                part = _v1(part)
            pq.write_table(part, episodes / f"batch-{n + 1:06d}-000000.parquet")


def _attribution(root: Path, store: Path) -> dict:
    prove = CLI("poisson-prove", root / "work", root / "home")
    done = prove("--store", str(store), "diff", "before", "after", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["attribution"]


def test_every_layout_gives_the_same_attribution(swept: tuple[Path, Path]) -> None:
    root, store = swept
    files = sorted(store.glob("*/episodes/*.parquet"))
    ids = {pq.read_schema(f).metadata[b"poisson_prove.schema"] for f in files}
    assert ids == {b"poisson-prove.episodes/2"}
    expected = _attribution(root, store)
    assert expected["available"] and expected["rows"]
    assert {row["named"] for row in expected["rows"]} == {"draft"}
    assert any(check for row in expected["rows"] for check in row["checks"])

    for layout in ("v2", "v1", "mixed", "row groups"):
        copy = root / layout.replace(" ", "-")
        _relaid(store, copy, layout)
        files = sorted(copy.glob("*/episodes/*.parquet"))
        with_column = ["agent_calls" in pq.read_schema(f).names for f in files]
        groups = sum(pq.ParquetFile(f).metadata.num_row_groups for f in files)
        assert groups > 10 and any(with_column) == (layout != "v1")
        assert all(with_column) == (layout in ("v2", "row groups"))
        assert _attribution(root, copy) == expected, layout
