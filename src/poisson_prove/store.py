"""The run store: one folder per run holding manifest.json, events.jsonl and episodes/*.parquet.

Crash safety: a batch is written under a temporary name, fsynced and renamed into place; the
manifest is replaced atomically. The Parquet files are the truth about what ran; the manifest's
counts are a convenience refreshed at most once a second and when the sweep ends. Concurrent
sweeps each write their own run folder; naming a new run (and so choosing its letter) happens
under a store-wide lock.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from poisson_prove.episode_table import (
    EPISODE_COLUMNS,
    episode_schema,
    rows_to_table,
    tuples_to_table,
)
from poisson_prove.errors import ProveError
from poisson_prove.run_checks import check_unique, listing_problem, refuse_unreadable
from poisson_prove.shared.jsonio import utc_now, write_json_atomic

if TYPE_CHECKING:
    import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written

MANIFEST_SCHEMA = "poisson-prove.run/1"
DEFAULT_STORE = "prove-runs"
STORE_ENV = "POISSON_PROVE_STORE"

__all__ = ["EPISODE_COLUMNS", "episode_schema", "rows_to_table", "tuples_to_table"]


def __getattr__(name: str) -> Any:
    # EPISODE_SCHEMA is built on first use: commands that never touch a batch skip pyarrow.
    if name == "EPISODE_SCHEMA":
        return episode_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

def resolve_store_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--store wins, then $POISSON_PROVE_STORE, then ./prove-runs."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(STORE_ENV)
    return Path(env) if env else Path(DEFAULT_STORE)


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


_DICTIONARY_COLUMNS = ["run_id", "cell", "cfg", "outcome", "case_id", "meta", "error_kind"]
_STATISTICS_COLUMNS = ["cell", "replicate", "seed", "outcome", "error_kind", "started_at"]


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
        """The completed batch files, in write order (temporary files are never listed)."""
        if not self.episodes_dir.is_dir():
            return []
        return sorted(self.episodes_dir.glob("*.parquet"))

    def read_episodes(self, columns: Sequence[str] | None = None) -> pa.Table:
        """Every stored episode of this run as one Arrow table (the store's schema)."""
        import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written

        schema = episode_schema()
        files = self.batch_files()
        wanted = list(columns) if columns else list(EPISODE_COLUMNS)
        if not files:
            return schema.empty_table().select(wanted)
        tables = [self.read_batch(f, wanted) for f in files]
        return pa.concat_tables(tables).cast(pa.schema([schema.field(name) for name in wanted]))

    def read_batch(self, path: Path, columns: Sequence[str], read_dictionary: Sequence[str] = ()) -> pa.Table:
        """One batch file's columns; a file that is not readable Parquet is a ProveError naming it.

        ParquetFile rather than pq.read_table: the latter imports pyarrow.dataset and pandas (~1 s).
        """
        import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written
        import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when batches are read or written

        try:
            parquet = pq.ParquetFile(path, read_dictionary=list(read_dictionary) or None)
            missing = [name for name in columns if name not in parquet.schema_arrow.names]
            if missing:
                raise ValueError(f"it has no column {', '.join(missing)}: not a batch of this store")
            return parquet.read(columns=list(columns))
        except KeyError as exc:  # pyarrow's read_dictionary names a column the file lacks
            exc = ValueError(f"it has no column {exc.args[0]!r}: not a batch of this store")
            raise self._unreadable(path, exc) from None
        except (pa.ArrowException, OSError, ValueError) as exc:
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

    def stored_keys(self) -> set[tuple[str, int]]:
        """The (condition, replicate) pairs already stored: what a resume must not run again."""
        table = self.read_episodes(["cell", "replicate"])
        self.check_unique(table)
        return set(zip(table.column("cell").to_pylist(), table.column("replicate").to_pylist(), strict=True))

    def check_unique(self, table: pa.Table | None = None) -> None:
        """Refuse a run that stores some (condition, replicate) twice: a batch file copied or
        duplicated in its folder. Counting those rows would double-count; `table` holds the
        run's condition and replicate columns when the caller has read them already."""
        check_unique(self, table)

    def unlisted_batches(self) -> list[Path]:
        """Batch files the run's events do not record writing: a copy, or the last batch of a
        sweep killed between its rename and its event. Cheap (no Parquet read)."""
        written = {e.get("file") for e in self.events() if e.get("event") == "batch"}
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


class RunWriter:
    """The single writer of one run: batches, events, the manifest."""

    def __init__(self, info: RunInfo) -> None:
        self.info = info
        self.path = info.path
        self.manifest: dict[str, Any] = dict(info.manifest)
        self.lock: FileLock | None = None  # the writer lock, when the writer holds one
        self._seq = len(info.batch_files())
        self.info.episodes_dir.mkdir(parents=True, exist_ok=True)
        # A batch whose rename never happened (the process was killed) is not part of the run.
        for stale in [*self.info.episodes_dir.glob("*.tmp"), *self.path.glob(".manifest.json.*.tmp")]:
            stale.unlink(missing_ok=True)

    def event(self, kind: str, **fields: Any) -> None:
        record = {"event": kind, "at": _iso(utc_now()), **fields}
        with open(self.path / "events.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")

    def write_batch(self, rows: pa.Table | Mapping[str, Sequence[Any]]) -> int:
        """Write one batch (an Arrow table or a mapping of column lists); return its row count."""
        import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written
        import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when batches are read or written

        schema = episode_schema()
        table = rows if isinstance(rows, pa.Table) else pa.table(dict(rows), schema=schema)
        if table.num_rows == 0:
            return 0
        table = table.cast(schema) if table.schema != schema else table
        self._seq += 1
        final = self.info.episodes_dir / f"batch-{self._seq:06d}-{secrets.token_hex(3)}.parquet"
        tmp = final.with_name(final.name + ".tmp")
        # Dictionary-encode the repetitive text columns and keep statistics where readers filter:
        # half the write time of the defaults, and smaller files.
        pq.write_table(table, tmp, use_dictionary=_DICTIONARY_COLUMNS, write_statistics=_STATISTICS_COLUMNS)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, final)
        self.event("batch", file=final.name, rows=table.num_rows)
        return table.num_rows

    def release(self) -> None:
        """Let another writer (a later --resume) have the run."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def update_manifest(self, *, durable: bool = True, **fields: Any) -> None:
        self.manifest.update(fields)
        write_json_atomic(self.path / "manifest.json", self.manifest, durable=durable)


class RunStore:
    """A store folder of runs."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = resolve_store_root(root)

    # Reading ------------------------------------------------------------------------------

    def runs(self) -> list[RunInfo]:
        """Every readable run, oldest first."""
        if not self.root.is_dir():
            return []
        found = []
        for manifest_path in self.root.glob("*/manifest.json"):
            try:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                continue
            if listing_problem(manifest) is None:
                found.append(RunInfo(manifest_path.parent, manifest))
        # created_ns orders runs made within one second (`latest` must be the last one made).
        found.sort(key=lambda r: (r.created, r.manifest.get("created_ns") or 0, r.run_id))
        return found

    def unreadable(self) -> list[tuple[Path, str]]:
        """Run folders whose manifest cannot be read, with why: `runs` leaves them out, so it
        says so rather than let a run vanish silently."""
        if not self.root.is_dir():
            return []
        bad = []
        for folder in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            manifest_path = folder / "manifest.json"
            if not manifest_path.exists():
                if (folder / "episodes").is_dir():  # a run folder that lost its manifest
                    bad.append((manifest_path, "it is missing"))
                continue
            try:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                bad.append((manifest_path, f"{type(exc).__name__}: {exc}"))
                continue
            problem = listing_problem(manifest)
            if problem is not None:
                bad.append((manifest_path, f"not a run manifest: {problem}"))
        return bad

    def check_usable(self) -> None:
        """Refuse a store path that is a file, or lies under one (before anything is written)."""
        for path in (self.root, *self.root.parents):
            if path.exists():
                if not path.is_dir():
                    where = "is a file" if path == self.root else f"lies under the file {path}"
                    raise ProveError(
                        f"--store {self.root} {where}; a store is a folder",
                        suggestions=["give --store a folder (it is created when missing)"],
                    )
                return

    def resolve(self, ref: str) -> RunInfo:
        """A run by id, name, unique id prefix, or `latest`."""
        self.check_usable()
        runs = self.runs()
        if not runs:
            self._refuse_unreadable(ref)
            raise ProveError(
                f"no runs in the store {self.root}",
                suggestions=["poisson-prove sweep --yes"],
            )
        if ref == "latest":
            return runs[-1]
        for run in runs:
            if ref in (run.run_id, run.name):
                return run
        prefixed = [r for r in runs if r.run_id.startswith(ref)]
        if len(prefixed) == 1:
            return prefixed[0]
        self._refuse_unreadable(ref)
        names = ", ".join(f'"{r.name}"' for r in runs[-5:])
        raise ProveError(
            f'no run named "{ref}" in the store {self.root} (latest: {names})',
            suggestions=[f"poisson-prove --store {self.root} runs"],
        )

    def _refuse_unreadable(self, ref: str) -> None:
        refuse_unreadable(self, ref)

    # Writing ------------------------------------------------------------------------------

    def create_run(
        self, *, target_id: str, name: str | None, manifest: Mapping[str, Any], hold: bool = False
    ) -> RunWriter:
        """Make a new run folder with its manifest (status `partial`) and a `start` event."""
        self.check_usable()
        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.root / ".store.lock"), timeout=60):
            existing = self.runs()
            taken = {r.name for r in existing}
            now = utc_now()
            if name is None:
                name = _next_name(target_id, now.date(), taken)
            elif name in taken:
                raise ProveError(
                    f'a run named "{name}" already exists in the store {self.root}',
                    suggestions=["choose another --name, or leave it out to have one computed"],
                )
            run_id = f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
            path = self.root / run_id
            path.mkdir()
            (path / "episodes").mkdir()
            # Held before the manifest exists, so a `--resume` never sees this run unheld.
            lock = _hold_run(path, name) if hold else None
            document = {
                "schema": MANIFEST_SCHEMA,
                "run_id": run_id,
                "name": name,
                **manifest,
                "status": "partial",
                "created": _iso(now),
                "created_ns": int(now.timestamp() * 1e6) * 1000,
                "finished": None,
            }
            write_json_atomic(path / "manifest.json", document)
        writer = RunWriter(RunInfo(path, document))
        writer.lock = lock
        writer.event("start", name=name)
        return writer

    def open_run(self, info: RunInfo, *, hold: bool = False) -> RunWriter:
        """A writer for an existing run; `hold` first takes the run's writer lock (refusing a run
        another sweep is writing right now), before stale temporary files are cleared."""
        lock = _hold_run(info.path, info.name) if hold else None
        writer = RunWriter(info)
        writer.lock = lock
        return writer


def _hold_run(path: Path, name: str) -> FileLock:
    """The run's writer lock (an OS lock, released when the process dies, even by kill -9)."""

    lock = FileLock(str(path / ".writer.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ProveError(
            f'run "{name}" is being written by another sweep right now',
            suggestions=["wait for that sweep to end, then: poisson-prove sweep --resume"],
        ) from None
    return lock


def _next_name(target_id: str, day: dt.date, taken: Iterable[str]) -> str:
    """`<target_id> <date> <letter>`: a, b, ... z, then aa, ab, ..."""
    taken = set(taken)
    letters = string.ascii_lowercase
    index = 0
    while True:
        suffix, n = "", index
        while True:
            suffix = letters[n % 26] + suffix
            n = n // 26 - 1
            if n < 0:
                break
        candidate = f"{target_id} {day.isoformat()} {suffix}"
        if candidate not in taken:
            return candidate
        index += 1


_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]+$")


def is_safe_id(text: str) -> bool:
    """Whether `text` can name a file in the store without leaving it."""
    return bool(_SAFE_ID.match(text)) and text not in {".", ".."}


def load_run(name_or_id: str = "latest", store: str | os.PathLike[str] | None = None) -> pa.Table:
    """The episodes of one stored run (by name, id or `latest`) as an Arrow table."""
    return RunStore(store).resolve(name_or_id).read_episodes()
