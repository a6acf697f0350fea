"""The run store: one folder per run holding manifest.json, events.jsonl and episodes/*.parquet.

Crash safety: a batch is written under a temporary name, fsynced and renamed into place
(prove_common.files); the manifest is replaced atomically; a finished run's batches are
compacted into one file, no row counted twice or lost at any instant (store.compaction). The
Parquet files are the truth about what ran; the manifest's counts are a convenience refreshed
at most once a second and when the sweep ends. Concurrent sweeps each write their own run
folder; naming a new run (and so choosing its letter) happens under a store-wide lock.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import string
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import poisson_prove.version as version
from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.store.checks import listing_problem
from poisson_prove.store.compaction import (
    Compaction,
    RunningCompaction,
    compact_run,
    next_sequence,
    remove_replaced,
)
from poisson_prove.store.info import RunInfo
from poisson_prove.store.table import DICTIONARY_COLUMNS, STATISTICS_COLUMNS, batch_metadata, episode_schema
from prove_common.files import HeldLock, LockTimeout, atomic_path, clear_stale_temps, lock
from prove_common.jsonio import utc_iso, utc_now, utc_now_iso, write_json_atomic

if TYPE_CHECKING:
    import pyarrow as pa  # pyarrow: ~160 ms, only when batches are read or written

MANIFEST_SCHEMA = "poisson-prove.run/1"
DEFAULT_STORE = "prove-runs"
STORE_ENV = "POISSON_PROVE_STORE"

__all__ = ["DEFAULT_STORE", "STORE_ENV", "RunInfo", "RunStore", "RunWriter", "load_run"]

def resolve_store_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--store wins, then $POISSON_PROVE_STORE, then ./prove-runs."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(STORE_ENV)
    return Path(env) if env else Path(DEFAULT_STORE)


class RunWriter:
    """The single writer of one run: batches, events, the manifest."""

    def __init__(self, info: RunInfo) -> None:
        self.info = info
        self.path = info.path
        self.manifest: dict[str, Any] = dict(info.manifest)
        self.lock: HeldLock | None = None  # the writer lock, when the writer holds one
        self._compacting: RunningCompaction | None = None  # see compact_as_written
        self.info.episodes_dir.mkdir(parents=True, exist_ok=True)
        # A batch whose rename never happened (the process was killed) is not part of the run;
        # the run has one writer at a time, so every temporary file here is a dead one's.
        clear_stale_temps(self.info.episodes_dir, every_writer=True)
        clear_stale_temps(self.path, "manifest.json", every_writer=True)
        # Batches a compacted file holds, left by a kill before their removal (store.compaction).
        remove_replaced(self.info)
        # The last batch's number, not the count: after a compaction or a batch moved out, the
        # next batch still sorts after every file already here.
        self._seq = next_sequence(self.info.episodes_dir)

    def event(self, kind: str, **fields: Any) -> None:
        record = {"event": kind, "at": utc_now_iso(), **fields}
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
        # The file says what it is to any reader: schema id, run, column meanings, spans' schema.
        metadata = batch_metadata(str(self.manifest["run_id"]), version.__version__)
        table = table.replace_schema_metadata(metadata)
        self._seq += 1
        final = self.info.episodes_dir / f"batch-{self._seq:06d}-{secrets.token_hex(3)}.parquet"
        with atomic_path(final) as tmp:  # fsynced, then renamed into place
            # Dictionary-encode the repetitive text columns and keep statistics where readers
            # filter: half the write time of the defaults, and smaller files.
            pq.write_table(
                table, tmp, use_dictionary=list(DICTIONARY_COLUMNS), write_statistics=list(STATISTICS_COLUMNS)
            )
        self.event("batch", file=final.name, rows=table.num_rows)
        if self._compacting is not None:
            self._compacting.add(final, table)
        return table.num_rows

    def compact_as_written(self) -> None:
        """From here, append each batch as it is written to the run's compacted file, when the
        run holds no batch yet (store.compaction.RunningCompaction); `compact` commits it."""
        if self._compacting is None and not self.info.batch_files():
            self._compacting = RunningCompaction(self.info)

    def compact(self) -> Compaction:
        """Rewrite the run's batch files as one compacted file (store.compaction), crash-safe:
        commit the file written as the batches were, else compact them now."""
        running, self._compacting = self._compacting, None
        if running is not None and running.failed is None:
            return running.commit(self.event)
        if running is not None:
            running.abandon()
        return compact_run(self.info, self.event)

    def release(self) -> None:
        """Let another writer (a later --resume) have the run."""
        if self._compacting is not None:  # the run did not end complete: its batches stay
            self._compacting.abandon()
            self._compacting = None
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
        _refuse_unreadable(self, ref)

    # Writing ------------------------------------------------------------------------------

    def create_run(
        self, *, target_id: str, name: str | None, manifest: Mapping[str, Any], hold: bool = False
    ) -> RunWriter:
        """Make a new run folder with its manifest (status `partial`) and a `start` event."""
        if name is not None:
            check_name_form(name)  # before the store folder is made
        self.check_usable()
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            store_lock = lock(self.root / ".store.lock")
        except LockTimeout as exc:
            raise ProveError(exc.message, suggestions=exc.suggestions) from None
        with store_lock:
            existing = self.runs()
            taken = {r.name for r in existing}
            now = utc_now()
            if name is None:
                name = _next_name(target_id, now.date(), taken)
            else:
                check_new_name(name, existing, self.root)
            run_id = f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
            path = self.root / run_id
            path.mkdir()
            (path / "episodes").mkdir()
            # Held before the manifest exists, so a `--resume` never sees this run unheld.
            held = _hold_run(path, name) if hold else None
            document = {
                "schema": MANIFEST_SCHEMA,
                "run_id": run_id,
                "name": name,
                **manifest,
                "status": "partial",
                "created": utc_iso(now),
                "created_ns": int(now.timestamp() * 1e6) * 1000,
                "finished": None,
            }
            write_json_atomic(path / "manifest.json", document)
        writer = RunWriter(RunInfo(path, document))
        writer.lock = held
        writer.event("start", name=name)
        return writer

    def open_run(self, info: RunInfo, *, hold: bool = False) -> RunWriter:
        """A writer for an existing run; `hold` first takes the run's writer lock (refusing a run
        another sweep is writing right now), before stale temporary files are cleared."""
        held = _hold_run(info.path, info.name) if hold else None
        writer = RunWriter(info)
        writer.lock = held
        return writer


#: the longest name a run may be given (as target_id): it is a table cell and typed in commands
NAME_MAX = 100


def check_name_form(name: str) -> None:
    """Refuse a run name that cannot be shown in a table or typed back in a command (exit 2):
    blank, holding a control or other non-printing character (a newline, an ANSI escape, a
    bidirectional override), or longer than NAME_MAX characters. Letters of any script are names."""
    again = ["choose a name of visible characters, or leave --name out to have one computed"]
    if not name.strip():
        raise ProveError("--name must not be empty", suggestions=again, exit_code=ProveExit.USAGE)
    hidden = next((char for char in name if not char.isprintable()), None)
    if hidden is not None:
        raise ProveError(
            f"--name holds the non-printing character {hidden!r}: a run's name is shown in tables "
            "and typed in commands",
            suggestions=again,
            exit_code=ProveExit.USAGE,
        )
    if len(name) > NAME_MAX:
        raise ProveError(
            f"--name is {len(name)} characters long: a run's name is at most {NAME_MAX}",
            suggestions=[f"choose a name of at most {NAME_MAX} characters, or leave --name out"],
            exit_code=ProveExit.USAGE,
        )


def check_new_name(name: str, existing: Sequence[RunInfo], root: Path) -> None:
    """Refuse a new run's name that cannot be shown or typed (check_name_form, exit 2), or that
    `resolve` could not lead back to it: one already taken (exit 1), or `latest` or another run's
    id or id prefix, which resolve to another run (exit 2)."""
    check_name_form(name)
    again = ["choose another --name, or leave it out to have one computed"]
    if any(run.name == name for run in existing):
        raise ProveError(f'a run named "{name}" already exists in the store {root}', suggestions=again)
    if name == "latest":
        raise ProveError(
            '--name "latest" is reserved: it always means the newest run',
            suggestions=again,
            exit_code=ProveExit.USAGE,
        )
    clash = next((run for run in existing if run.run_id.startswith(name)), None)
    if clash is not None:
        what = "the id" if clash.run_id == name else "the start of the id"
        raise ProveError(
            f'--name "{name}" is {what} of the run "{clash.name}" in the store {root}, '
            "so the new run could not be found by its name",
            suggestions=again,
            exit_code=ProveExit.USAGE,
        )


def _hold_run(path: Path, name: str) -> HeldLock:
    """The run's writer lock (an OS lock, released when the process dies, even by kill -9)."""
    try:
        return lock(path / ".writer.lock", timeout=0)
    except LockTimeout:
        raise ProveError(
            f'run "{name}" is being written by another sweep right now',
            suggestions=["wait for that sweep to end, then: poisson-prove sweep --resume"],
        ) from None


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


def _refuse_unreadable(store: RunStore, ref: str) -> None:
    """`ref` names a run folder whose manifest cannot be read: say that, not "no run named"."""
    for manifest_path, why in store.unreadable():
        folder = manifest_path.parent.name
        if ref and (folder == ref or folder.startswith(ref) or ref == "latest" or _named(manifest_path, ref)):
            if ref == "latest" and store.runs():
                continue
            raise ProveError(
                f'run folder {manifest_path.parent} matches "{ref}" but its manifest.json '
                f"cannot be read ({why})",
                suggestions=[
                    f"restore {manifest_path} from a copy, or move the folder "
                    f"{manifest_path.parent} out of the store"
                ],
            )


def _named(manifest_path: Path, ref: str) -> bool:
    """Whether a manifest that is JSON but not a usable one still gives the run this name."""
    try:
        document = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(document, dict) and document.get("name") == ref
