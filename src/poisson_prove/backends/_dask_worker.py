"""What the Dask backend installs on a cluster's workers: the spec's folder, named environment
variables, and the task each episode runs as.

Both are Dask worker plugins (`Client.register_plugin`), so a worker that joins the cluster
during the sweep gets them too, and unregistering them at the sweep's end runs their teardown
on every worker: the folder is deleted and the variables are put back as they were. This module
imports `distributed` at its top and is imported by dask.py only when the Dask backend runs;
workers import it by name to unpickle the plugins.

Dask's own UploadDirectory is not used for the folder: it unpacks into the nanny's directory
and changes the nanny's sys.path, not the worker's, and a worker started without a nanny gets
nothing. Here the folder is unpacked into each worker's own local directory, under a name made
for the sweep, and the episode's task is told that path.
"""

from __future__ import annotations

import importlib
import io
import os
import shutil
import sys
import zipfile
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from poisson_prove.backends._attempt import Attempt, run_attempt
from poisson_prove.episode.capture import missing_instrumentors
from poisson_prove.episode.run import Job, Task

#: Folders never shipped: version control, environments, caches, and run stores.
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "venv", "env"})
#: A folder holding one of these files is a virtual environment or a run store: not shipped.
SKIPPED_MARKERS = ("pyvenv.cfg", ".store.lock")


def spec_folder_zip(folder: Path, exclude: Collection[Path] = ()) -> tuple[bytes, int]:
    """The spec's folder as zip bytes and its file count: every file but those under a folder
    whose name starts with a dot or is in SKIPPED_DIRS, or that holds a SKIPPED_MARKERS file,
    compiled `.pyc` files, and the files of `exclude` (the TLS key and certificates)."""
    skipped = {path.resolve() for path in exclude}
    buffer = io.BytesIO()
    count = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, dirs, files in os.walk(folder):
            here = Path(root)
            dirs[:] = sorted(
                d
                for d in dirs
                if not d.startswith(".")
                and d not in SKIPPED_DIRS
                and not any((here / d / marker).exists() for marker in SKIPPED_MARKERS)
            )
            for name in sorted(files):
                path = here / name
                if name.endswith(".pyc") or not path.is_file() or path.resolve() in skipped:
                    continue
                archive.write(path, path.relative_to(folder).as_posix())
                count += 1
    return buffer.getvalue(), count


def forget_imports_from(folders: Collection[Path]) -> None:
    """Drop from this process the modules imported from `folders` and those folders' sys.path
    entries: a worker outlives the sweep, and a module kept from an earlier sweep's copy would
    answer the next sweep's import of the same name, with the old code, from a deleted folder."""
    roots = [str(folder) for folder in folders]

    def inside(path: str) -> bool:
        return any(path == root or path.startswith(root + os.sep) for root in roots)

    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and inside(os.path.abspath(file)):
            del sys.modules[name]
    sys.path[:] = [entry for entry in sys.path if not inside(entry)]
    importlib.invalidate_caches()


class SpecFolder(WorkerPlugin):
    """Unpacks the spec's folder into the worker's local directory as `folder`; removes it,
    and what was imported from it, at teardown."""

    #: How a sweep's folder is named (dask.py): `prove-<run id>-spec`.
    PATTERN = "prove-*-spec"

    def __init__(self, folder: str, data: bytes) -> None:
        self.folder = folder
        self.data = data

    def setup(self, worker: Any) -> None:
        local = Path(worker.local_directory)
        # a sweep that ended without its teardown (killed) left its copy's modules behind
        forget_imports_from([path for path in local.glob(self.PATTERN) if path.name != self.folder])
        target = local / self.folder
        with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
            archive.extractall(target)

    def teardown(self, worker: Any) -> None:
        target = Path(worker.local_directory) / self.folder
        forget_imports_from([target])
        shutil.rmtree(target, ignore_errors=True)


class Environment(WorkerPlugin):
    """Sets the named variables in the worker's process; puts back what was there at teardown.
    The values live in the scheduler's memory while the plugin is registered, never on disk."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)
        self._before: dict[str, str | None] = {}

    def setup(self, worker: Any) -> None:
        self._before = {name: os.environ.get(name) for name in self.values}
        os.environ.update(self.values)

    def teardown(self, worker: Any) -> None:
        for name, value in self._before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_on_worker(job: Job, task: Task, folder: str | None) -> Attempt:
    """One episode's task: with a shipped spec folder, the target is imported from the worker's
    copy (`folder` under its local directory), not from the submitting machine's path."""
    if folder is not None:
        job = replace(job, spec_dir=str(Path(get_worker().local_directory) / folder))
    return run_attempt(job, task)


def missing_here(names: list[str]) -> dict[str, str]:
    """name -> why not, for each named instrumentor this worker has not installed (its own
    entry points, read where it runs)."""
    return missing_instrumentors(names)
