"""Re-running the recorded invocation: the same argv, `-m` mode and cwd, under this interpreter.

A snapshot file is text anyone can edit (its invocation hash is no signature: recomputing it
is one line), so what it asks to run is checked before anything runs (`checked_command`): only
the interpreter running proveai itself, running a script or module inside the project, with
interpreter options that change nothing outside the run, from a folder inside the project.
Anything else is an InvocationRefused naming what was asked.

The child gets PROVEAI_VERIFY=1 (so user code can guard side effects), PROVEAI_TRACES_DIR
pointing at a temporary folder (its fresh trace lands there, never in the user's store),
and PROVEAI_REPLICATE / PROVEAI_SEED so a pipeline can seed its model calls per replicate.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from typing import Any

from prove_common.children import run_child
from proveai.capture.invocation import split_interpreter_argv
from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.model import describe_command
from proveai.store import project_root

DEFAULT_TIMEOUT_S = 600.0
_TAIL_LINES = 12


def replicate_seed(seed: int, stream: str, replicate: int) -> int:
    """A seed per (user seed, stream, replicate), below 2**31 so every model API accepts it.

    `stream` separates pinning ("pin") from verifying ("verify") so fresh replicates never
    reuse the pinned ones' seeds: the comparison then measures noise, not replay.
    """
    digest = hashlib.sha256(f"{seed}\x1f{stream}\x1f{replicate}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 2**31


def why_not_rerunnable(invocation: Mapping[str, Any] | None) -> str | None:
    """None when the invocation can be re-run, else the reason in words."""
    if not invocation:
        return "the trace carries no recorded invocation (captured by an older version?)"
    if not invocation.get("rerunnable", True):
        return str(invocation.get("why_not") or "the invocation was recorded as not re-runnable")
    argv = invocation.get("argv")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return "the recorded argv is not a list of strings"
    if not invocation.get("module") and not invocation.get("script") and not _script_args(argv):
        return "the recorded command names no script or module"
    return None


def _script_args(argv: Sequence[str]) -> list[str]:
    return [a for a in argv if not a.startswith("-")]


# what a recorded `python` may be called (python, python3, python3.12, python.exe, pythonw.exe)
_PYTHON_NAME = re.compile(r"python(\d+(\.\d+)*)?w?(\.exe)?", re.IGNORECASE)
# interpreter options a re-run may carry: none runs other code or writes outside the run
# (-X pycache_prefix=, -X presite= and -i are not among them)
_PLAIN_FLAGS = frozenset({"-B", "-b", "-d", "-E", "-I", "-O", "-P", "-q", "-R", "-s", "-S", "-u", "-v"})
_VALUE_FLAGS = frozenset({"-W", "--check-hash-based-pycs"})
_PLAIN_X = frozenset({
    "dev", "utf8", "importtime", "tracemalloc", "faulthandler", "warn_default_encoding",
    "frozen_modules", "no_debug_ranges", "int_max_str_digits", "showrefcount", "perf", "cpu_count",
})


class InvocationRefused(ProveAIError):
    """A recorded invocation verify does not run: `command` is what it asked to run (its
    interpreter and argv, shell-quoted), `reason` why not. `snapshot` names the snapshot
    that asked, when one did."""

    def __init__(self, command: str, reason: str, *, snapshot: str | None = None) -> None:
        asker = f"snapshot {snapshot!r}" if snapshot else "the recorded invocation"
        super().__init__(
            f"{asker} asks to run {command}: {reason}",
            suggestions=[
                "a snapshot file is code: review what its invocation runs; re-pin from your own "
                "run with proveai snapshot init"
            ],
            exit_code=ProveAIExit.USAGE,
        )
        self.command = command
        self.reason = reason
        self.snapshot = snapshot


def checked_command(
    invocation: Mapping[str, Any], root: Path, *, snapshot: str | None = None
) -> tuple[list[str], Path]:
    """(the child's argv, its working folder) for re-running `invocation` in the project at
    `root`: this interpreter (sys.executable), then the recorded interpreter arguments unchanged.
    InvocationRefused when the invocation asks for anything but a Python interpreter running a
    script or module inside the project, from a folder inside it; nothing is run to find out."""
    reason = why_not_rerunnable(invocation)
    if reason:
        raise ProveAIError(f"cannot re-run the pipeline: {reason}", exit_code=ProveAIExit.USAGE)
    argv = [str(a) for a in invocation.get("argv") or []]
    try:
        cwd = _confined_cwd(invocation, root)
        _check_interpreter(invocation.get("python"))
        parsed = split_interpreter_argv([sys.executable, *argv])
        _check_options(parsed.options)
        if parsed.mode == "script" and parsed.target is not None:
            _check_script(parsed.target, cwd, root)
        elif parsed.mode == "module" and parsed.target is not None:
            _check_module(parsed.target, cwd, root)
        else:
            raise _Refusal(f"it runs no script or module ({parsed.why_not or parsed.mode})")
    except _Refusal as refusal:
        raise InvocationRefused(describe_command(invocation), str(refusal), snapshot=snapshot) from None
    return [sys.executable, *argv], cwd


class _Refusal(Exception):
    """Why one part of an invocation is refused (checked_command names the whole command)."""


def _inside(path: Path, root: Path) -> bool:
    """True when `path`, every link followed, is `root` or under it."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _check_interpreter(recorded: Any) -> None:
    """The recorded interpreter is this one, or (on a machine that lacks it, such as a CI
    runner) names a Python; verify runs sys.executable either way, never the recorded path."""
    if not isinstance(recorded, str) or not recorded:
        return  # no interpreter recorded: this one
    if not _PYTHON_NAME.fullmatch(re.split(r"[\\/]", recorded)[-1]):  # a Windows pin's path too
        raise _Refusal(f"{recorded} is not a Python interpreter")
    if os.path.exists(recorded) and not _this_interpreter(recorded):
        raise _Refusal(
            f"{recorded} is not the interpreter running proveai ({sys.executable}); "
            f"verify with that one ({shlex.quote(recorded)} -m proveai snapshot verify) or re-pin"
        )


def _this_interpreter(path: str) -> bool:
    """True when `path` is sys.executable under another of its names: the same file in the
    same folder (a venv's python, python3 and python3.12; /usr/bin/python3 and python3.12). A
    venv's python is a link to the base interpreter, but another environment: not this one."""
    here = os.path.abspath(sys.executable)
    there = os.path.abspath(path)
    if there == here:
        return True
    try:
        return os.path.dirname(there) == os.path.dirname(here) and os.path.samefile(there, here)
    except OSError:
        return False


def _check_options(options: Sequence[tuple[str, str | None]]) -> None:
    for flag, value in options:
        if flag in _PLAIN_FLAGS or flag in _VALUE_FLAGS:
            continue
        if flag == "-X" and value is not None and value.split("=", 1)[0] in _PLAIN_X:
            continue
        shown = flag if value is None else f"{flag} {value}"
        raise _Refusal(f"the interpreter option {shown} is not one a re-run may carry")


def _confined_cwd(invocation: Mapping[str, Any], root: Path) -> Path:
    relative = str(invocation.get("cwd") or ".")
    if os.path.isabs(relative) or not _inside(root / relative, root):
        raise _Refusal(f"its working folder {relative!r} is outside the project ({root})")
    cwd = (root / relative).resolve()
    if not cwd.is_dir():
        raise ProveAIError(
            f"the recorded working folder {relative!r} does not exist under {root}",
            suggestions=["re-pin from the folder you run the pipeline in: proveai snapshot init"],
        )
    return cwd


def _check_script(script: str, cwd: Path, root: Path) -> None:
    path = Path(script) if os.path.isabs(script) else cwd / script
    if not _inside(path, root):
        raise _Refusal(f"the script {script} is outside the project ({root})")


def _check_module(module: str, cwd: Path, root: Path) -> None:
    """`python -m module` from `cwd` runs a file inside the project: found the way the child
    will find it (the cwd first, then this interpreter's import path), without importing."""
    origin = _module_file(module, cwd)
    if origin is None:
        raise _Refusal(f"the module {module} is not found in the project")
    if not _inside(origin, root):
        raise _Refusal(f"the module {module} is {origin}, outside the project ({root})")


def _module_file(module: str, cwd: Path) -> Path | None:
    """The file `python -m module` runs, located by the finders alone: no package's
    __init__ is executed (importlib.util.find_spec would import the parents)."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    spec: ModuleSpec | None = PathFinder.find_spec(parts[0], [str(cwd)])
    if spec is None:
        for finder in sys.meta_path:  # installed packages, editable installs' finders included
            find = getattr(finder, "find_spec", None)
            if find is None or type(finder).__module__ == "_distutils_hack":  # it patches, not finds
                continue
            spec = find(parts[0], None)
            if spec is not None:
                break
    for part in parts[1:]:
        locations = spec.submodule_search_locations if spec is not None else None
        if locations is None:
            return None
        spec = PathFinder.find_spec(part, list(locations))
    if spec is None:
        return None
    if spec.submodule_search_locations is not None:  # a package: python -m runs its __main__
        for location in spec.submodule_search_locations:
            main = Path(location) / "__main__.py"
            if main.is_file():
                return main
        return None
    return Path(spec.origin) if spec.origin and spec.origin not in ("built-in", "frozen") else None


@dataclass(frozen=True)
class RerunResult:
    """One finished re-run: its exit code, where its traces landed, and its output's tail."""

    command: tuple[str, ...]
    cwd: Path
    returncode: int
    traces_dir: Path
    stdout_tail: str
    stderr_tail: str
    replicate: int
    seed: int | None


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_TAIL_LINES:])


def rerun(
    invocation: Mapping[str, Any],
    *,
    traces_dir: Path,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    root: Path | None = None,
    replicate: int = 0,
    seed: int | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> RerunResult:
    """Run the recorded command once, its fresh traces going to `traces_dir`.

    Raises InvocationRefused when the invocation asks for anything checked_command refuses,
    ProveAIError (exit 2) when the command cannot start or exceeds `timeout_s`; the child and
    everything it started are killed on timeout.
    """
    root = root or project_root()
    command, cwd = checked_command(invocation, root)
    traces_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        PROVEAI_VERIFY="1",
        PROVEAI_TRACES_DIR=str(traces_dir),
        PROVEAI_REPLICATE=str(replicate),
    )
    if seed is not None:
        env["PROVEAI_SEED"] = str(seed)
    else:
        env.pop("PROVEAI_SEED", None)
    if extra_env:
        env.update(extra_env)
    logs = Path(tempfile.mkdtemp(prefix="proveai-rerun-log-"))
    try:
        out_path, err_path = logs / "stdout", logs / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                # its own session: on timeout (or Ctrl-C) the whole group goes, grandchildren too
                finished = run_child(command, cwd=cwd, env=env, timeout=timeout_s, stdout=out, stderr=err)
            except OSError as exc:
                raise ProveAIError(
                    f"cannot start the recorded command {command[0]}: {exc.strerror}",
                    suggestions=["re-pin with the interpreter you use now: proveai snapshot init"],
                ) from exc
        if finished.timed_out:
            raise ProveAIError(
                f"the pipeline exceeded the --timeout of {timeout_s:g} s and was stopped "
                f"({' '.join(command[1:])})",
                suggestions=[
                    "raise it: proveai snapshot verify --timeout SECONDS",
                    "or skip the re-run: --quick",
                ],
                exit_code=ProveAIExit.USAGE,
            )
        return RerunResult(
            command=tuple(command),
            cwd=cwd,
            returncode=finished.returncode,
            traces_dir=traces_dir,
            stdout_tail=_tail(out_path),
            stderr_tail=_tail(err_path),
            replicate=replicate,
            seed=seed,
        )
    finally:
        shutil.rmtree(logs, ignore_errors=True)

