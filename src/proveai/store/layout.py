"""The project-local layout under ./proveai/, where traces are stored by default, and the one
rule each for the project folder, the trace files of a folder, the names of stored artifacts and
locking a stored file."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import prove_common.files
from prove_common.files import DEFAULT_LOCK_TIMEOUT_S, HeldLock, LockTimeout
from proveai.errors import ProveAIError

TRACES_ENV = "PROVEAI_TRACES_DIR"


def default_traces_dir() -> Path:
    """$PROVEAI_TRACES_DIR when set, else ./proveai/traces (relative to the working directory)."""
    configured = os.environ.get(TRACES_ENV)
    return Path(configured) if configured else Path("proveai") / "traces"


def traces_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The trace store root: `root` if given, else the default."""
    return Path(root) if root is not None else default_traces_dir()


@dataclass(frozen=True)
class Store:
    """The ./proveai/ folder of a project: traces, snapshots, runs, baselines, experiments.

    `Store(root=".")` points at `<root>/proveai/`. The traces folder honours
    $PROVEAI_TRACES_DIR only when the store is the default one (root ".").
    """

    root: Path = Path(".")

    def __init__(self, root: str | os.PathLike[str] = ".") -> None:
        object.__setattr__(self, "root", Path(root))

    @property
    def base(self) -> Path:
        return self.root / "proveai"

    @property
    def traces_dir(self) -> Path:
        if self.root == Path(".") and os.environ.get(TRACES_ENV):
            return Path(os.environ[TRACES_ENV])
        return self.base / "traces"

    @property
    def snapshots_dir(self) -> Path:
        return self.base / "snapshots"

    @property
    def runs_dir(self) -> Path:
        return self.base / "runs"

    @property
    def baselines_dir(self) -> Path:
        return self.base / "baselines"

    @property
    def experiments_dir(self) -> Path:
        return self.base / "experiments"


# ---- one rule each for the project folder, the trace files and artifact names ------------------

MANIFEST = "manifest.json"  # the trace index (see proveai.store.traces.index)
NOT_TRACE_SUFFIXES = (".detection.json",)  # JSON files in a traces folder that are not traces
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: the cwd) holding .git or pyproject.toml.

    `start` itself (resolved) when no such folder exists.
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists():
            return folder
    return here


def trace_files(root: Path) -> Iterator[Path]:
    """The trace files (<trace_id>.json) of a traces folder: not the index, detections or temp files."""
    for path in root.glob("*.json"):
        name = path.name
        if name == MANIFEST or name.endswith(NOT_TRACE_SUFFIXES) or name.startswith("."):
            continue
        yield path


def check_name(kind: str, name: str) -> str:
    """`name` when it is usable as the file name of a stored `kind` (snapshot, baseline, ...).

    One rule for every name proveai turns into a file: 1-100 letters, digits, '.', '_' or '-',
    starting with a letter or digit (so no separators, no dot-files, no leading dash).
    """
    if not NAME_RE.match(name or ""):
        raise ProveAIError(
            f"invalid {kind} name {name!r}: not usable as a file name",
            suggestions=["use letters, digits, '.', '_' and '-', starting with a letter or digit "
                         "(e.g. latest, weekly-goods)"],
        )
    return name


def lock(path: Path, *, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> HeldLock:
    """The one file lock (prove_common.files.lock) in proveai's terms: waiting past `timeout`
    is a ProveAIError, so the command exits with the I/O code, never the gate's 1."""
    try:
        return prove_common.files.lock(path, timeout=timeout)
    except LockTimeout as exc:
        raise ProveAIError(exc.message, suggestions=exc.suggestions) from None
