"""What a monitored call depended on: the project files it read and the project modules it imports.

CI auto-targeting (proveai.ci.targeting) verifies a snapshot when a pull request changed one
of these, so a prompt file an agent opens or a helper module it imports counts like its source.

- Files read: an audit hook (`sys.addaudithook`, installed once when the first trace opens)
  notes each path opened for reading while a monitored call runs, on that call's span builder.
  Nothing else happens per open; outside a call (no trace, or between agents) the hook returns
  at once. When the trace closes each path is resolved once and kept when it lies in the
  project, outside the interpreter's folders (the venv, site-packages) and proveai's own store.
  A module's compiled file (`__pycache__/m.cpython-311.pyc`) counts as its source `m.py`, and
  any `.py` file a call opens (a module first imported during it) counts as imported.
- Modules imported: the import statements of the agent's module (module and function level,
  parsed once per file), resolved against `sys.modules`, followed transitively through every
  module whose file lies in the project.

Paths are relative to the project root, `/`-separated. `None` (hook refused, or a span read
from an older trace) means unknown, which targeting reads as "in doubt: verify".
"""

from __future__ import annotations

import ast
import os
import site
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from proveai.traces.context import FRAME

_installed: bool | None = None  # None: not tried yet
_get_frame = FRAME.get
_WRITE_ONLY = os.O_WRONLY
_ACCESS = os.O_ACCMODE
_STORE_FOLDER = "proveai"  # ./proveai/ (traces, snapshots, caches): proveai's files, not the agent's


def install() -> bool:
    """Install the open hook (once per process); False when another audit hook refused it."""
    global _installed
    if _installed is None:
        try:
            sys.addaudithook(_on_audit)
            _installed = True
        except Exception:  # an earlier audit hook may veto new ones: reads stay unknown
            _installed = False
    return _installed


def tracking() -> bool:
    return bool(_installed)


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    # runs for every audit event of the process: the first test must reject almost all of them
    if event != "open":
        return
    try:
        frame = _get_frame()
        if frame is None or frame._owner is frame:  # no trace, or the trace itself (not an agent)
            return
        path, _mode, flags = args
        if isinstance(path, int) or (isinstance(flags, int) and flags & _ACCESS == _WRITE_ONLY):
            return  # an already open descriptor, or a file only written
        text = os.fsdecode(path)
        if not os.path.isabs(text):
            text = os.path.join(os.getcwd(), text)
        opened = frame.opened
        if opened is None:
            frame.opened = opened = []
        opened.append(text)
    except Exception:  # a hook that raised would break the agent's own open(): never
        return


# ---- resolving paths (at trace close) ----------------------------------------------------------
_outside: tuple[str, ...] | None = None
_resolved: dict[tuple[str, str], tuple[str, bool] | None] = {}


def _interpreter_folders() -> tuple[str, ...]:
    global _outside
    if _outside is None:
        folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        try:
            folders.update(site.getsitepackages())
            folders.add(site.getusersitepackages())
        except AttributeError:  # a virtualenv's old site module lacks them
            pass
        _outside = tuple(sorted({os.path.realpath(f) + os.sep for f in folders if f}))
    return _outside


def project_path(path: str, root: str) -> tuple[str, bool] | None:
    """(path relative to `root`, is it a Python module) for a project file, else None."""
    key = (root, path)
    if key in _resolved:
        return _resolved[key]
    if len(_resolved) > 50_000:  # a call that opens files without end must not grow this forever
        _resolved.clear()
    _resolved[key] = found = _project_path(path, root)
    return found


def _project_path(path: str, root: str) -> tuple[str, bool] | None:
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    if not real.startswith(base + os.sep):
        return None
    if real.startswith(_interpreter_folders()):
        return None
    parts = Path(os.path.relpath(real, base)).parts
    if not parts or parts[0] in (_STORE_FOLDER, ".git") or {"site-packages", "dist-packages"} & set(parts):
        return None
    if len(parts) >= 2 and parts[-2] == "__pycache__" and parts[-1].endswith(".pyc"):
        parts = (*parts[:-2], parts[-1].split(".", 1)[0] + ".py")  # m.cpython-311.pyc -> m.py
    relative = "/".join(parts)
    return relative, relative.endswith(".py")


def files_of(opened: Sequence[str] | None, root: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(project files read, project modules imported) of the paths a call opened."""
    reads: set[str] = set()
    modules: set[str] = set()
    for path in set(opened or ()):
        found = project_path(path, root)
        if found is not None:
            (modules if found[1] else reads).add(found[0])
    return tuple(sorted(reads)), tuple(sorted(modules))


# ---- the import graph ------------------------------------------------------------------------------
_statements: dict[str, tuple[int, tuple[tuple[str, int, tuple[str, ...]], ...]]] = {}
_graphs: dict[tuple[str | None, str | None, str], tuple[int, tuple[str, ...]]] = {}


def _import_statements(path: str) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """(module, level, names) of every import statement in the file, parsed once per version."""
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return ()
    cached = _statements.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        found: tuple[tuple[str, int, tuple[str, ...]], ...] = ()
    else:
        items: list[tuple[str, int, tuple[str, ...]]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                items.extend((alias.name, 0, ()) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                items.append((node.module or "", node.level, tuple(a.name for a in node.names)))
        found = tuple(items)
    _statements[path] = (stamp, found)
    return found


def _imported_names(statement: tuple[str, int, tuple[str, ...]], package: str) -> list[str]:
    """The module names an import statement can load, its parent packages included."""
    module, level, names = statement
    if level:
        bits = package.split(".") if package else []
        if level - 1 > len(bits) or not bits:
            return []
        base = ".".join(bits[: len(bits) - (level - 1)])
        module = f"{base}.{module}" if module else base
    if not module:
        return []
    parts = module.split(".")
    found = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    found += [f"{module}.{name}" for name in names if name != "*"]
    return found


def _module_file(module: Any) -> str | None:
    path = getattr(module, "__file__", None)
    return path if isinstance(path, str) else None


def imports_of(function: str | None, source_file: str | None, root: str) -> tuple[str, ...]:
    """The project files of the modules the agent's module (`function`'s, else the file
    `source_file`) imports, transitively, its own file left out; recomputed only when
    sys.modules has grown since the last answer (this runs at every span's freeze)."""
    key = (function, source_file, root)
    size = len(sys.modules)
    cached = _graphs.get(key)
    if cached is not None and cached[0] == size:
        return cached[1]
    module_name = function.split(":", 1)[0] if function else None
    start = sys.modules.get(module_name) if module_name else None
    start_file = _module_file(start) or source_file
    if start_file is None:
        return ()
    if not os.path.isabs(start_file):
        start_file = os.path.join(root, start_file)
    own = project_path(start_file, root)
    found: set[str] = set()
    seen_files = {start_file}
    queue: list[tuple[str, str]] = [(start_file, str(getattr(start, "__package__", None) or ""))]
    while queue:
        path, package = queue.pop()
        for statement in _import_statements(path):
            for name in _imported_names(statement, package):
                module = sys.modules.get(name)
                file = _module_file(module)
                if file is None or file in seen_files:
                    continue
                seen_files.add(file)
                inside = project_path(file, root)
                if inside is None:
                    continue  # the standard library or an installed package: not the project's
                found.add(inside[0])
                queue.append((file, str(getattr(module, "__package__", None) or "")))
    found.difference_update(p for p in (source_file, own[0] if own else None) if p)
    answer = tuple(sorted(found))
    _graphs[key] = (size, answer)
    return answer


def dependencies(
    opened: Sequence[str] | None, function: str | None, source_file: str | None, root: str
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(files read, modules imported) of one monitored call, or None when reads are not tracked."""
    if not _installed:
        return None
    imported = imports_of(function, source_file, root)
    if opened is None:  # the common case: the call opened nothing
        return (), imported
    reads, loaded = files_of(opened, root)
    if loaded:
        imported = tuple(sorted(set(imported).union(loaded).difference((source_file,))))
    return reads, imported
