"""The project-local layout under ./proveai/ and where traces are stored by default."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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
