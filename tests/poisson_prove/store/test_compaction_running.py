"""The compacted file a sweep writes as its batches are (store.compaction.RunningCompaction) is
the one `compact_run` makes of the same batches afterwards: the same rows and types, row groups,
encodings, file boundaries and metadata, read back by pyarrow and DuckDB; a run that does not end
complete keeps its batches and no temporary file."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from poisson_prove.store import compaction
from poisson_prove.store.info import COMPACTED_SUFFIX, REPLACES_KEY
from poisson_prove.store.runs import RunStore, RunWriter
from poisson_prove.store.table import tuples_to_table


def _rows(first: int, count: int, rng: random.Random) -> list[tuple]:
    rows = []
    for replicate in range(first, first + count):
        errored = rng.random() < 0.1
        spans = (
            None
            if rng.random() < 0.5
            else json.dumps(
                [
                    {
                        "name": "plan",
                        "source": "step",
                        "status": "ok",
                        "start": 1.0,
                        "end": 2.0,
                        "parent": None,
                        "attributes": {"n": replicate},
                    }
                ]
            )
        )
        rows.append(
            (
                f'{{"x":"c{replicate % 3}"}}',
                f'{{"x":"c{replicate % 3}"}}',
                replicate,
                rng.randrange(2**31),
                None if errored else rng.choice(["ok", "bad"]),
                None if errored else float(rng.randint(1, 5)),
                None if errored else 5.0,
                f"case-{replicate % 7}",
                '{"case_id":"x"}',
                "RuntimeError" if errored else None,
                "tool down" if errored else None,
                1.7e9 + replicate / 7,
                rng.random() / 100,
                spans,
            )
        )
    return rows


def _written(root: Path, sizes: list[int], *, as_written: bool) -> RunWriter:
    writer = RunStore(root).create_run(target_id="t", name="r", manifest={"design": {}}, hold=True)
    if as_written:
        writer.compact_as_written()
    rng, first = random.Random(7), 0
    for size in sizes:
        writer.write_batch(tuples_to_table(writer.info.run_id, _rows(first, size, rng)))
        first += size
    return writer


def _layout(path: Path) -> tuple:
    metadata = pq.read_metadata(path)
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    encodings = [tuple(sorted(g.column(c).encodings)) for g in groups for c in range(g.num_columns)]
    replaces = sorted(json.loads(metadata.metadata.get(REPLACES_KEY.encode(), b"[]")))
    return [g.num_rows for g in groups], encodings, replaces


@pytest.mark.parametrize("limits", [None, (64, 200)], ids=["one file", "row groups of 64, files of 200 rows"])
def test_the_file_written_as_the_batches_are_is_compact_runs_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limits: tuple[int, int] | None
) -> None:
    if limits is not None:
        monkeypatch.setattr(compaction, "COMPACT_ROW_GROUP", limits[0])
        monkeypatch.setattr(compaction, "COMPACT_MAX_ROWS", limits[1])
    sizes = [50, 37, 50, 50, 13, 50, 50, 50, 1, 50]
    running = _written(tmp_path / "running", sizes, as_written=True)
    batches = sorted(running.info.episodes_dir.glob("*.parquet"))
    assert len(batches) == len(sizes)
    # The same batch files, compacted afterwards by compact_run in a copy of the run.
    later_root = tmp_path / "later"
    shutil.copytree(
        running.info.path,
        later_root / running.info.path.name,
        ignore=shutil.ignore_patterns(".writer.lock", "*.tmp"),
    )
    (later_info,) = RunStore(later_root).runs()
    later = RunStore(later_root).open_run(later_info, hold=True)
    by_running, by_later = running.compact(), later.compact()
    running.release()
    later.release()
    assert by_running.skipped is by_later.skipped is None
    # 200-row files: [50, 37, 50, 50, 13] and [50, 50, 50, 1]; the last batch alone stays as it is.
    assert by_running.replaced == by_later.replaced == (10 if limits is None else 9)
    mine, theirs = running.info.batch_files(), later_info.batch_files()
    compacted = [p.name.endswith(COMPACTED_SUFFIX) for p in mine]
    assert compacted == [p.name.endswith(COMPACTED_SUFFIX) for p in theirs]
    assert compacted == ([True] if limits is None else [True, True, False])
    assert [p.name for p in mine if COMPACTED_SUFFIX not in p.name] == [
        p.name for p in theirs if COMPACTED_SUFFIX not in p.name
    ]
    for a, b in zip(mine, theirs, strict=True):
        assert _layout(a) == _layout(b) and (a.name == b.name or COMPACTED_SUFFIX in a.name)
        left, right = pq.read_table(a), pq.read_table(b)
        assert left.schema.equals(right.schema) and left.equals(right)
        # The footer's key-value metadata is the same (the batches', and the files it replaces);
        # the Arrow schema stored in it was written before those names were known.
        footer = [
            {k: v for k, v in pq.read_metadata(p).metadata.items() if k != b"ARROW:schema"} for p in (a, b)
        ]
        assert footer[0] == footer[1] and (REPLACES_KEY.encode() in footer[0]) == (COMPACTED_SUFFIX in a.name)
        assert left.schema.metadata == {
            k: v for k, v in right.schema.metadata.items() if k != REPLACES_KEY.encode()
        }
        duck = duckdb.connect()
        assert (
            duck.execute(f"select * from read_parquet('{a}')").fetchall()
            == duck.execute(f"select * from read_parquet('{b}')").fetchall()
        )
    # Nothing else is left: no batch, no temporary file; the events name what each file holds.
    assert sorted(p.name for p in running.info.episodes_dir.iterdir()) == sorted(p.name for p in mine)
    events = [e for e in running.info.events() if e["event"] == "compact"]
    assert [e["file"] for e in events] == [p.name for p in mine if COMPACTED_SUFFIX in p.name]
    assert sum(e["rows"] for e in events) == sum(sizes) - (0 if limits is None else 50)
    assert sorted(n for e in events for n in e["replaces"]) == sorted(
        p.name for p in batches if p.name not in {m.name for m in mine}
    )


@pytest.mark.parametrize("as_written", [True, False], ids=["as the batches are written", "afterwards"])
def test_a_compacted_file_writes_the_columns_of_one_value_a_row_as_plain_pages(
    tmp_path: Path, as_written: bool
) -> None:
    """Read by DuckDB's own Parquet reader: the seeds, moments, durations and spans take plain
    pages (no dictionary built to be dropped), every other column a dictionary, the agent calls'
    nested leaves too; `dictionary_columns` names exactly the file's other column paths."""
    writer = _written(tmp_path, [40, 40, 40], as_written=as_written)
    assert writer.compact().replaced == 3
    writer.release()
    (path,) = writer.info.batch_files()
    duck = duckdb.connect()
    found = f"select path_in_schema, encodings from parquet_metadata('{path}') where row_group_id = 0"
    # DuckDB names a nested leaf `agent_calls, list, element, agent`; Parquet's dotted path is pyarrow's
    encodings = {name.replace(", ", "."): used for name, used in duck.execute(found).fetchall()}
    assert len(encodings) > len(compaction.UNIQUE_COLUMNS) + 10  # agent_calls is several leaves
    dictionary = {name for name, used in encodings.items() if "DICTIONARY" in used}
    assert set(encodings) - dictionary == compaction.UNIQUE_COLUMNS, encodings
    assert {"cell", "replicate", "outcome", "t", "horizon", "agent_calls.list.element.agent"} <= dictionary
    assert compaction.dictionary_columns(pq.read_schema(path)) == [
        name for name in encodings if name not in compaction.UNIQUE_COLUMNS
    ]


def test_a_run_that_does_not_end_complete_keeps_its_batches_and_no_temporary_file(tmp_path: Path) -> None:
    writer = _written(tmp_path, [20, 20, 20], as_written=True)
    assert any(p.name.endswith(".tmp") for p in writer.info.episodes_dir.iterdir())  # being written
    writer.release()  # the sweep stopped short: no compact()
    names = sorted(p.name for p in writer.info.episodes_dir.iterdir())
    assert len(names) == 3 and not [n for n in names if n.endswith(".tmp") or COMPACTED_SUFFIX in n]


def test_one_batch_is_never_compacted_and_writes_no_second_file(tmp_path: Path) -> None:
    writer = _written(tmp_path, [30], as_written=True)
    assert len(list(writer.info.episodes_dir.iterdir())) == 1  # the first batch is only held
    done = writer.compact()
    writer.release()
    assert done.skipped == "one batch file or none" and done.replaced == 0
    (only,) = writer.info.episodes_dir.iterdir()
    assert not only.name.endswith(COMPACTED_SUFFIX)


def test_a_run_with_batches_stored_before_is_compacted_at_its_end(tmp_path: Path) -> None:
    first = _written(tmp_path, [10, 10], as_written=False)
    first.release()
    (info,) = RunStore(tmp_path).runs()
    writer = RunStore(tmp_path).open_run(info, hold=True)
    writer.compact_as_written()  # batches are stored already: compact_run will read them all
    writer.write_batch(tuples_to_table(info.run_id, _rows(20, 10, random.Random(3))))
    assert not any(p.name.endswith(".tmp") for p in info.episodes_dir.iterdir())
    done = writer.compact()
    writer.release()
    assert done.replaced == 3 and pq.read_metadata(info.batch_files()[0]).num_rows == 30
