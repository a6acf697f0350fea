"""Compaction: a finished run's batch files rewritten as one file, crash-safe at every instant.

A sweep writes a batch file when 25,000 rows wait or about once a second, so a run is tens or
hundreds of files, and every reader pays an open, a footer and a decode per column per file.
When a sweep ends with every planned episode stored, `compact_run` rewrites the run's batches,
in write order, as one file (`batch-<seq>-<hex>-compacted.parquet`, `<seq>` that of the last
batch it holds, so it sorts where its rows were written), in row groups of COMPACT_ROW_GROUP
rows. A run larger than COMPACT_MAX_ROWS rows or COMPACT_MAX_BYTES bytes of batch files becomes
several such files, consecutive batches each, so a reader that takes a whole file's column (the
spans) holds a bounded part of the run.

The steps, and why a kill at any instant keeps every row exactly once:

1. the new file is written under a temporary name (prove_common.files.atomic_path); its Parquet
   key-value metadata (`poisson_prove.replaces`, info.REPLACES_KEY) names every file it replaces,
   and every file those named in turn (a file compacted again). No reader lists a temporary file;
   the next writer of the run removes it (clear_stale_temps).
2. a `compact` event records it (`{file, rows, replaces}`); it is fsynced and renamed into place,
   and the folder is fsynced. From here `RunInfo.batch_files()` leaves out the files it replaces.
3. the files it replaces are removed. A kill before they all are leaves some in the folder, still
   left out by every reader of the store; the next writer of the run removes them
   (`remove_replaced`, called by RunWriter).

A sweep that starts a run writes its compacted file as it goes (`RunningCompaction`): each batch,
once it is in place, is appended to a temporary compacted file too (by the sweep's writer thread,
while the rollouts go on), so the end of a large sweep commits a file already written instead of
reading and encoding every row again. Its commit is steps 2 and 3 above, and its file holds what
`compact_run` would have made of the same batches (the same rows, row groups, encodings and
footer metadata; only the Arrow schema in the footer, written before the replaced files were
known, does not repeat their names: tests/poisson_prove/store/test_compaction_running.py). A
run resumed with batches already stored is compacted at its end by `compact_run`.

Compaction copies whatever columns the batches hold, with their types and the newest batch's
key-value metadata (schema-agnostic); batches whose columns differ (a run resumed by another
version) are left as they are, as is a run whose batches cannot be read or written again (a
full disk): it only ever saves reading time, and the batch files stay the truth.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from poisson_prove.errors import ProveError
from poisson_prove.store.info import COMPACTED_SUFFIX, REPLACES_KEY, RunInfo, replaced_by, replaced_names
from poisson_prove.store.table import STATISTICS_COLUMNS
from prove_common.files import atomic_path, fsync_file, temp_path

if TYPE_CHECKING:
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is compacted

__all__ = [
    "COMPACT_MAX_BYTES",
    "COMPACT_MAX_ROWS",
    "COMPACT_ROW_GROUP",
    "UNIQUE_COLUMNS",
    "Compaction",
    "RunningCompaction",
    "compact_run",
    "dictionary_columns",
    "next_sequence",
    "remove_replaced",
]

#: Rows per row group of a compacted file. A reader decodes row groups in parallel (Arrow's
#: threads) and a row group is the unit a filter skips by its statistics; 131,072 rows of the
#: columns a comparison reads are ~1 MB, large enough that a footer and a decode per row group
#: cost nothing beside the values, and a million-row run is 8 of them, so both cores decode.
#: Measured on a 1M-row run of `bench_diff.py`: 65,536 to 1,048,576 read alike, 25,000 (the
#: batches' own size) slower (see BENCHMARKS.md, Diff).
COMPACT_ROW_GROUP = 131_072
#: The most rows one compacted file holds: larger runs become several files of consecutive batches.
COMPACT_MAX_ROWS = 1 << 21
#: The most bytes of batch files one compacted file is made of: the spans can be large, and a reader
#: of one row (an attribution reads a wanted row's spans) decodes its file's whole column.
COMPACT_MAX_BYTES = 128 << 20
#: The columns that hold a value of their own in each row: a compacted file writes them as plain
#: pages. Given a dictionary, Parquet would build it for every row group only to drop it when it
#: outgrows a page (a run's seeds and moments never repeat); in a small run it would keep it, a
#: copy of the values and an index each. Measured on a million-row run: a fourth of the
#: compaction's CPU, in the batch writer's thread, which shares the two cores with the episodes.
UNIQUE_COLUMNS = frozenset({"seed", "started_at", "duration_s", "spans"})

_SEQUENCE = re.compile(r"^batch-(\d+)-")


@dataclass(frozen=True)
class Compaction:
    """What `compact_run` did: the files written, how many it replaced, or why it did nothing."""

    written: tuple[Path, ...] = ()
    replaced: int = 0
    skipped: str | None = None  # why the batches were left as they are


def next_sequence(folder: Path) -> int:
    """The sequence number of the last batch in `folder` (0 when none): the next batch takes
    the one after it, so the files sort in write order whatever was compacted or moved out."""
    found = [int(m.group(1)) for p in folder.glob("*.parquet") if (m := _SEQUENCE.match(p.name))]
    return max(found, default=0)


def remove_replaced(info: RunInfo) -> list[Path]:
    """Remove the batch files a compacted file of the run replaces (what a kill in step 3 left);
    only the run's one writer calls it. Returns the files removed."""
    if not info.episodes_dir.is_dir():
        return []
    files = sorted(info.episodes_dir.glob("*.parquet"))
    replaced = replaced_names(files)
    removed = []
    for path in files:
        if path.name in replaced:
            path.unlink(missing_ok=True)
            removed.append(path)
    if removed:
        _fsync_folder(info.episodes_dir)
    return removed


def compact_run(info: RunInfo, event: Callable[..., None]) -> Compaction:
    """Rewrite the run's batch files as one compacted file (or one per COMPACT_MAX_ROWS rows),
    then remove them; `event(kind, **fields)` records each file in the run's events. Only the
    run's one writer calls it (it holds the writer lock)."""
    import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when a run is compacted

    remove_replaced(info)
    files = info.batch_files()
    if len(files) < 2:
        return Compaction(skipped="one batch file or none")
    try:
        opened = [(path, pq.ParquetFile(path)) for path in files]
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        return Compaction(skipped=f"a batch cannot be read: {type(exc).__name__}: {exc}")
    schema = opened[0][1].schema_arrow
    if any(not parquet.schema_arrow.equals(schema, check_metadata=False) for _, parquet in opened[1:]):
        return Compaction(skipped="the batches' columns differ")
    written: list[Path] = []
    replaced = 0
    for group in _groups(opened):
        if len(group) < 2:
            continue
        try:
            path = _compact_group(info, group, event)
        except (OSError, ValueError, ProveError) as exc:  # a full disk, a batch damaged meanwhile
            return Compaction(tuple(written), replaced, f"{type(exc).__name__}: {exc}")
        written.append(path)
        replaced += len(group)
    return Compaction(tuple(written), replaced)


def _groups(opened: Sequence[tuple[Path, Any]]) -> list[list[tuple[Path, Any]]]:
    """Consecutive batches, each group at most COMPACT_MAX_ROWS rows and COMPACT_MAX_BYTES bytes."""
    groups: list[list[tuple[Path, Any]]] = []
    rows = size = 0
    for path, parquet in opened:
        count, nbytes = parquet.metadata.num_rows, path.stat().st_size
        if not groups or rows + count > COMPACT_MAX_ROWS or size + nbytes > COMPACT_MAX_BYTES:
            groups.append([])
            rows = size = 0
        groups[-1].append((path, parquet))
        rows += count
        size += nbytes
    return groups


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The Parquet column paths of `schema` (a nested column's leaves, `agent_calls.list.element.agent`)
    that a compacted file dictionary-encodes: every one but UNIQUE_COLUMNS."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is compacted

    def leaves(path: str, arrow_type: pa.DataType) -> list[str]:
        if pa.types.is_struct(arrow_type):
            return [leaf for f in arrow_type for leaf in leaves(f"{path}.{f.name}", f.type)]
        if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
            return leaves(f"{path}.list.element", arrow_type.value_type)
        return [path]

    return [leaf for f in schema if f.name not in UNIQUE_COLUMNS for leaf in leaves(f.name, f.type)]


def _compacted_path(info: RunInfo, last_batch: str) -> Path:
    """The name of a compacted file: the sequence number of the last batch it holds (so the
    run's files still sort in write order) and a random tag."""
    last = _SEQUENCE.match(last_batch)
    sequence = int(last.group(1)) if last else next_sequence(info.episodes_dir)
    return info.episodes_dir / f"batch-{sequence:06d}-{secrets.token_hex(3)}{COMPACTED_SUFFIX}"


def _compacted_writer(tmp: Path, schema: pa.Schema) -> Any:
    """The pq.ParquetWriter of a compacted file, for both compactions (the same file from each).

    Every column dictionary-encoded where its values repeat (Parquet falls back to plain pages
    for a column whose dictionary outgrows a page), UNIQUE_COLUMNS plain: the times and horizons
    of a run take a few distinct values, and read a third faster so. The values, and the types
    a reader gets, are the batches' own.
    """
    import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when a run is compacted

    present = set(schema.names)
    return pq.ParquetWriter(
        tmp,
        schema,
        use_dictionary=dictionary_columns(schema),
        write_statistics=[name for name in STATISTICS_COLUMNS if name in present],
    )


def _compact_group(info: RunInfo, group: Sequence[tuple[Path, Any]], event: Callable[..., None]) -> Path:
    """Steps 1-3 for one group of consecutive batches; returns the compacted file."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is compacted

    names = [path.name for path, _ in group]
    replaces: set[str] = set(names)
    for path, _ in group:
        if path.name.endswith(COMPACTED_SUFFIX):
            replaces |= replaced_by(path)  # compacted again: what it replaced stays replaced
    final = _compacted_path(info, names[-1])
    newest = group[-1][1].schema_arrow
    metadata = {**(newest.metadata or {}), REPLACES_KEY.encode(): json.dumps(sorted(replaces)).encode()}
    schema = newest.with_metadata(metadata)
    rows = 0
    with atomic_path(final) as tmp:
        with _compacted_writer(tmp, schema) as out:
            waiting: list[pa.Table] = []
            held = 0
            for path, parquet in group:
                try:
                    table = parquet.read()
                except (pa.ArrowException, OSError) as exc:
                    raise info._unreadable(path, exc) from exc
                waiting.append(table.replace_schema_metadata(metadata))
                held += table.num_rows
                rows += table.num_rows
                if held >= COMPACT_ROW_GROUP:
                    held = _write_groups(out, waiting, final=False)
            _write_groups(out, waiting, final=True)
        event("compact", file=final.name, rows=rows, replaces=names)
    removed = False
    try:
        _fsync_folder(info.episodes_dir)  # the rename is durable before a replaced file goes
        for path, _ in group:
            path.unlink(missing_ok=True)
        removed = True
    finally:
        if not removed:  # a Ctrl-C (or an error) mid-way: a complete run gets no next writer
            for path, _ in group:
                path.unlink(missing_ok=True)
    remove_replaced(info)  # what a compacted input had replaced and a kill left behind
    _fsync_folder(info.episodes_dir)
    return final


@dataclass
class _Group:
    """Consecutive batches on their way into one compacted file (still a temporary file)."""

    tmp: Path
    out: Any  # the pq.ParquetWriter; None once the file is finished
    names: list[str]
    rows: int = 0
    size: int = 0
    held: int = 0  # rows waiting for a whole row group
    waiting: list[Any] | None = None


class RunningCompaction:
    """The run's compacted file(s) written while its batches are (see the module docstring).

    `add(path, table)` after each batch is in place (one thread at a time); `commit(event)` once
    the run is complete, which returns what `compact_run` would; `abandon()` otherwise. A write
    that fails (a full disk) stops it (`failed` says why) and the batches stay the truth.
    """

    def __init__(self, info: RunInfo) -> None:
        self.info = info
        self.groups: list[_Group] = []
        self.failed: str | None = None
        # The first batch, held until a second comes: a run of one batch is never compacted,
        # so a small sweep writes no second file.
        self._first: tuple[Path, pa.Table] | None = None

    def add(self, path: Path, table: pa.Table) -> None:
        """Append the batch just written at `path` (its rows `table`) to the compacted file."""
        if self.failed is not None:
            return
        if not self.groups and self._first is None:
            self._first = (path, table)
            return
        if self._first is not None:
            first, self._first = self._first, None
            self._append(*first)
        self._append(path, table)

    def _append(self, path: Path, table: pa.Table) -> None:
        import pyarrow as pa  # pyarrow: loaded by the batch's own write

        if self.failed is not None:
            return
        try:
            nbytes = path.stat().st_size
            group = self.groups[-1] if self.groups and self.groups[-1].out is not None else None
            if group is not None and (
                group.rows + table.num_rows > COMPACT_MAX_ROWS or group.size + nbytes > COMPACT_MAX_BYTES
            ):
                self._finish(group)
                group = None
            if group is None:
                group = self._start(table.schema)
            group.names.append(path.name)
            group.rows += table.num_rows
            group.size += nbytes
            assert group.waiting is not None
            group.waiting.append(table)
            group.held += table.num_rows
            if group.held >= COMPACT_ROW_GROUP:
                group.held = _write_groups(group.out, group.waiting, final=False)
        except (OSError, ValueError, pa.ArrowException) as exc:
            self.failed = f"{type(exc).__name__}: {exc}"
            self.abandon()

    def _start(self, schema: pa.Schema) -> _Group:
        tmp = temp_path(self.info.episodes_dir / f"compacting-{secrets.token_hex(3)}{COMPACTED_SUFFIX}")
        group = _Group(tmp, None, [], waiting=[])
        self.groups.append(group)  # before the file exists: abandon() removes it whatever happens
        group.out = _compacted_writer(tmp, schema)
        return group

    def _finish(self, group: _Group) -> None:
        """Write what waits, name the files it replaces in its metadata, close and fsync it."""
        assert group.waiting is not None
        _write_groups(group.out, group.waiting, final=True)
        group.out.add_key_value_metadata({REPLACES_KEY: json.dumps(sorted(group.names))})
        group.out.close()
        group.out = None
        fsync_file(group.tmp)

    def commit(self, event: Callable[..., None]) -> Compaction:
        """Steps 2 and 3 for every file written (the run is complete: every batch was added)."""
        if self.failed is not None:
            return Compaction(skipped=self.failed)
        written: list[Path] = []
        replaced = 0
        try:
            for group in self.groups:
                if group.out is not None:
                    self._finish(group)
            for group in self.groups:
                if len(group.names) < 2:
                    group.tmp.unlink(missing_ok=True)  # one batch: it stays as it is
                    continue
                final = _compacted_path(self.info, group.names[-1])
                event("compact", file=final.name, rows=group.rows, replaces=group.names)
                os.replace(group.tmp, final)
                written.append(final)
                replaced += len(group.names)
                try:
                    _fsync_folder(self.info.episodes_dir)  # the rename is durable before a replaced file goes
                finally:  # a Ctrl-C mid-way too: a complete run gets no next writer to remove them
                    for name in group.names:
                        (self.info.episodes_dir / name).unlink(missing_ok=True)
        except (OSError, ValueError) as exc:  # a full disk: what is committed stays committed
            self.abandon()
            return Compaction(tuple(written), replaced, f"{type(exc).__name__}: {exc}")
        finally:
            self.abandon()  # what was not committed (a Ctrl-C mid-way included)
        if written:
            remove_replaced(self.info)
            _fsync_folder(self.info.episodes_dir)
        return Compaction(tuple(written), replaced, None if written else "one batch file or none")

    def abandon(self) -> None:
        """Remove every temporary file not committed (the run stays as its batches)."""
        self._first = None
        for group in self.groups:
            if group.out is not None:
                try:
                    group.out.close()
                except Exception:  # a file being thrown away: its error does not matter
                    pass
                group.out = None
            group.tmp.unlink(missing_ok=True)
        self.groups = []


def _write_groups(out: Any, waiting: list[pa.Table], *, final: bool) -> int:
    """Write the waiting rows in whole row groups of COMPACT_ROW_GROUP (all of them when
    `final`); keep the remainder waiting and return its row count."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is compacted

    if not waiting:
        return 0
    table = pa.concat_tables(waiting)
    whole = table.num_rows if final else table.num_rows - table.num_rows % COMPACT_ROW_GROUP
    if whole:
        out.write_table(table.slice(0, whole), row_group_size=COMPACT_ROW_GROUP)
    rest = table.slice(whole)
    waiting[:] = [rest] if rest.num_rows else []
    return rest.num_rows


def _fsync_folder(folder: Path) -> None:
    """Make the renames and removals in `folder` durable (a power cut keeps the order)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system that cannot fsync a folder: nothing more to do
    finally:
        os.close(fd)
