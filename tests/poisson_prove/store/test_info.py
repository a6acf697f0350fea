"""RunInfo (store/info.py): a stored run as its folder and manifest describe it, its batch files
and events, and its episodes read back (checked against pyarrow's own Parquet reading)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from poisson_prove.episode.row import EPISODE_COLUMNS
from poisson_prove.errors import ProveError
from poisson_prove.store.info import RunInfo
from tests.poisson_prove.runs import from_outcomes, write_run

OUTCOMES = {
    ("refund", 0.0): ["resolved", None, "unresolved", "resolved", None],
    ("password", 0.5): ["timeout", "resolved", None],
}


@pytest.fixture
def run(tmp_path: Path) -> RunInfo:
    return write_run(tmp_path / "prove-runs", from_outcomes(OUTCOMES), name="night", batches=3)


def test_the_manifest_fields_and_their_defaults(tmp_path: Path) -> None:
    bare = RunInfo(tmp_path, {"run_id": "r-1", "name": "n"})
    assert (bare.run_id, bare.name, bare.status, bare.created) == ("r-1", "n", "partial", "")
    assert bare.episodes_dir == tmp_path / "episodes"
    assert bare.batch_files() == [] and bare.events() == [] and bare.unlisted_batches() == []
    empty = bare.read_episodes(["cell", "outcome"])
    assert empty.num_rows == 0 and empty.column_names == ["cell", "outcome"]
    assert bare.read_episodes().column_names == list(EPISODE_COLUMNS)


def test_episodes_read_back_as_pyarrow_reads_the_batch_files(run: RunInfo) -> None:
    manifest = json.loads((run.path / "manifest.json").read_text())
    assert (run.run_id, run.name, run.status) == (manifest["run_id"], "night", "complete")
    assert run.created == manifest["created"]
    files = run.batch_files()
    assert len(files) == 3 and files == sorted(files)
    expected = pq.ParquetDataset(files).read(columns=["cell", "replicate", "outcome", "t"])
    table = run.read_episodes(["cell", "replicate", "outcome", "t"])
    assert table.column_names == ["cell", "replicate", "outcome", "t"]
    assert table.to_pylist() == expected.to_pylist()
    assert run.read_episodes().num_rows == 8
    assert run.errored_count() == 3


def test_temporary_files_are_never_batches_and_unrecorded_batches_are_named(run: RunInfo) -> None:
    first = run.batch_files()[0]
    (run.episodes_dir / f".{first.name}.123-abcdef.tmp").write_bytes(b"half a batch")
    assert len(run.batch_files()) == 3
    assert run.unlisted_batches() == []
    copy = run.episodes_dir / "batch-000009-ffffff.parquet"
    shutil.copy(first, copy)
    assert run.unlisted_batches() == [copy]
    assert run.read_episodes().num_rows == 8 + pq.ParquetFile(first).metadata.num_rows


def test_a_torn_event_line_is_skipped(run: RunInfo) -> None:
    events = run.path / "events.jsonl"
    recorded = [json.loads(line) for line in events.read_text().splitlines()]
    with open(events, "a", encoding="utf-8") as handle:
        handle.write('{"event": "batch", "fi')  # a line cut by a kill
    assert run.events() == recorded
    assert [e["file"] for e in run.events() if e["event"] == "batch"] == [p.name for p in run.batch_files()]


def test_an_unreadable_batch_is_one_error_naming_it_and_the_way_on(run: RunInfo) -> None:
    damaged = run.batch_files()[1]
    damaged.write_bytes(damaged.read_bytes()[:100])
    with pytest.raises(ProveError) as caught:
        run.read_episodes()
    error = caught.value
    assert error.message.startswith(f'batch file {damaged} of run "night" cannot be read: ')
    assert list(error.suggestions) == [
        f'move {damaged.name} out of {damaged.parent}, then run its episodes again: '
        'poisson-prove sweep --resume "night" --yes'
    ]


def test_a_parquet_file_of_another_shape_is_not_a_batch(run: RunInfo) -> None:
    foreign = run.episodes_dir / "batch-999998-eeeeee.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), foreign)
    with pytest.raises(ProveError, match="it has no column cell, outcome: not a batch of this store"):
        run.read_batch(foreign, ["cell", "outcome"])
    with pytest.raises(ProveError, match=r"it has no column .*cell.*: not a batch of this store"):
        run.read_batch(foreign, ["x"], read_dictionary=["cell"])
    assert run.read_batch(foreign, ["x"]).column("x").to_pylist() == [1, 2]


def test_a_batch_whose_column_holds_another_type_is_not_a_batch(run: RunInfo) -> None:
    """A batch rewritten with its seeds as text is one error naming the file and the column,
    not a KeyError deep in the comparison; a dictionary-encoded column of the store's type is
    still read."""
    batch = run.batch_files()[0]
    table = pq.read_table(batch)
    seeds = pa.array([str(seed) for seed in table.column("seed").to_pylist()])
    pq.write_table(table.set_column(table.schema.get_field_index("seed"), "seed", seeds), batch)
    with pytest.raises(ProveError) as caught:
        run.read_episodes()
    assert caught.value.message == (
        f'batch file {batch} of run "night" cannot be read: ValueError: its column seed holds string, '
        "not int64: not a batch of this store"
    )
    assert run.read_batch(batch, ["cell", "outcome"], read_dictionary=["cell"]).num_rows == table.num_rows
