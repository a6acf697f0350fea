"""A stored run as its folder and manifest describe it: `RunInfo` (its batch files, events,
and reading its episodes back). The lowest room of the store above the table schema: the
readers and checks above take a `RunInfo`.

A compacted file (store.compaction: `batch-<seq>-<hex>-compacted.parquet`) names in its Parquet
key-value metadata (`poisson_prove.replaces`) the batch files whose rows it holds; while any of
those is still in the folder (a kill between the compacted file's rename and their removal),
`batch_files` leaves it out, so no row is ever counted twice."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from poisson_prove.episode.row import EPISODE_COLUMNS
from poisson_prove.errors import ProveError
from poisson_prove.store.table import METADATA_PREFIX, episode_schema

if TYPE_CHECKING:
    import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written

#: How a compacted file's name ends: only such a file can replace others (store.compaction).
COMPACTED_SUFFIX = "-compacted.parquet"
#: The Parquet key-value metadata key of a compacted file: the JSON list of the file names it replaces.
REPLACES_KEY = f"{METADATA_PREFIX}replaces"


def replaced_by(path: Path) -> frozenset[str]:
    """The names of the files whose rows the compacted file `path` holds (its metadata's
    REPLACES_KEY); nothing for a file whose footer cannot be read (it is then refused where it is
    read, naming it) or that names none."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a compacted file sits beside others
    import pyarrow.parquet as pq  # as above

    try:
        raw = (pq.read_metadata(path).metadata or {}).get(REPLACES_KEY.encode())
        names = json.loads(raw) if raw is not None else []
    except (pa.ArrowException, OSError, ValueError):
        return frozenset()
    if not isinstance(names, list):
        return frozenset()
    return frozenset(name for name in names if isinstance(name, str))


def replaced_names(files: Sequence[Path]) -> frozenset[str]:
    """The names among (and beyond) `files` that a compacted file of them replaces. Reads a
    footer only when a compacted file sits beside another file (a kill mid-compaction, or
    batches written after one): a run of one compacted file costs no Parquet read."""
    if len(files) < 2 or not any(path.name.endswith(COMPACTED_SUFFIX) for path in files):
        return frozenset()
    out: set[str] = set()
    for path in files:
        if path.name.endswith(COMPACTED_SUFFIX):
            out |= replaced_by(path) - {path.name}
    return frozenset(out)


def _mistyped(found: pa.Schema, columns: Sequence[str]) -> str | None:
    """`<name> holds <type>, not <type>` for the first column whose type is not the store's own
    (a dictionary of it, another integer or string width, another timestamp unit are), or None."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written

    schema = episode_schema()
    families = (pa.types.is_integer, pa.types.is_floating, pa.types.is_timestamp)
    for name in columns:
        if name not in schema.names:
            continue
        have, want = found.field(name).type, schema.field(name).type
        if pa.types.is_dictionary(have):
            have = have.value_type
        if have == want or any(kind(have) and kind(want) for kind in families):
            continue
        if pa.types.is_string(want) and (pa.types.is_string(have) or pa.types.is_large_string(have)):
            continue
        return f"{name} holds {have}, not {want}"
    return None


class BatchesChanged(ProveError):
    """A batch file listed a moment ago is gone: the run's writer compacted it meanwhile (its rows
    are in the compacted file now). A reader lists the files again and reads them again."""


#: How many times a whole read is tried while the run's batch files change under it.
READ_TRIES = 3


@dataclass(frozen=True)
class RunInfo:
    """A stored run as its manifest describes it."""

    path: Path
    manifest: Mapping[str, Any]

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def status(self) -> str:
        return str(self.manifest.get("status", "partial"))

    @property
    def created(self) -> str:
        return str(self.manifest.get("created", ""))

    @property
    def episodes_dir(self) -> Path:
        return self.path / "episodes"

    def batch_files(self) -> list[Path]:
        """The completed batch files, in write order (temporary files are never listed, nor the
        batch files a compacted file replaces: its rows are theirs)."""
        if not self.episodes_dir.is_dir():
            return []
        files = sorted(self.episodes_dir.glob("*.parquet"))
        replaced = replaced_names(files)
        return [path for path in files if path.name not in replaced] if replaced else files

    def read_episodes(self, columns: Sequence[str] | None = None) -> pa.Table:
        """Every stored episode of this run as one Arrow table (the store's schema)."""
        import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written

        schema = episode_schema()
        wanted = list(columns) if columns else list(EPISODE_COLUMNS)
        for attempt in range(READ_TRIES):
            files = self.batch_files()
            if not files:
                return schema.empty_table().select(wanted)
            try:
                tables = [self.read_batch(f, wanted) for f in files]
            except BatchesChanged:
                if attempt + 1 == READ_TRIES:
                    raise
                continue  # compacted meanwhile: list the files again
            return pa.concat_tables(tables).cast(pa.schema([schema.field(name) for name in wanted]))
        raise AssertionError("unreachable")  # the loop returns or raises

    def read_batch(self, path: Path, columns: Sequence[str], read_dictionary: Sequence[str] = ()) -> pa.Table:
        """One batch file's columns; a file that is not readable Parquet is a ProveError naming it.

        ParquetFile rather than pq.read_table: the latter imports pyarrow.dataset and pandas (~1 s).
        """
        import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written
        import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when batches are read or written

        try:
            # pre_buffer=False: the file is local, and reading its column chunks into one
            # coalesced buffer first costs a copy (~20% of reading three columns of a million rows)
            parquet = pq.ParquetFile(path, read_dictionary=list(read_dictionary) or None, pre_buffer=False)
            missing = [name for name in columns if name not in parquet.schema_arrow.names]
            if missing:
                raise ValueError(f"it has no column {', '.join(missing)}: not a batch of this store")
            wrong = _mistyped(parquet.schema_arrow, columns)
            if wrong:
                raise ValueError(f"its column {wrong}: not a batch of this store")
            return parquet.read(columns=list(columns))
        except KeyError as exc:  # pyarrow's read_dictionary names a column the file lacks
            # pyarrow's KeyError holds the name as bytes: say it as text
            name = exc.args[0].decode() if isinstance(exc.args[0], bytes) else exc.args[0]
            missing_column = ValueError(f"it has no column {name!r}: not a batch of this store")
            raise self._unreadable(path, missing_column) from None
        except (pa.ArrowException, OSError, ValueError) as exc:
            if isinstance(exc, FileNotFoundError) and not path.exists():
                raise BatchesChanged(
                    f'batch file {path} of run "{self.name}" was removed while the run was read '
                    "(its sweep compacted the run's batches into one file)",
                    suggestions=["run the command again"],
                ) from None
            raise self._unreadable(path, exc) from exc

    def _unreadable(self, path: Path, exc: Exception) -> ProveError:
        # Batches are renamed into place only once written whole, so this file was changed
        # (or truncated) afterwards: say which one, and how to run its episodes again.
        return ProveError(
            f'batch file {path} of run "{self.name}" cannot be read: {type(exc).__name__}: {exc}',
            suggestions=[
                f"move {path.name} out of {path.parent}, then run its episodes again: "
                f'poisson-prove sweep --resume "{self.name}" --yes'
            ],
        )

    def unlisted_batches(self) -> list[Path]:
        """Batch files the run's events do not record writing: a copy, or the last batch of a
        sweep killed between its rename and its event. Cheap (no Parquet read)."""
        written = {e.get("file") for e in self.events() if e.get("event") in ("batch", "compact")}
        return [path for path in self.batch_files() if path.name not in written]

    def errored_count(self) -> int:
        """Stored rows without an outcome."""
        return self.read_episodes(["outcome"]).column("outcome").null_count

    def events(self) -> list[dict[str, Any]]:
        path = self.path / "events.jsonl"
        if not path.exists():
            return []
        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line torn by a kill; the batch files are the truth
        return out
