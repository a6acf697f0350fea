"""Re-running the recorded invocation exactly: same interpreter, argv, `-m` mode and cwd.

The child gets PROVEAI_VERIFY=1 (so user code can guard side effects), PROVEAI_TRACES_DIR
pointing at a temporary folder (its fresh trace lands there, never in the user's store),
and PROVEAI_REPLICATE / PROVEAI_SEED so a pipeline can seed its model calls per replicate.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove_common.children import run_child
from proveai.errors import ProveAIError, ProveAIExit
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


def build_command(invocation: Mapping[str, Any], python: str) -> list[str]:
    """The child's argv: the interpreter, then the recorded interpreter arguments unchanged
    (they are sys.orig_argv[1:], so `-m pkg.mod`, options and positionals come back as typed)."""
    return [python, *(str(a) for a in invocation.get("argv") or [])]


def resolve_python(invocation: Mapping[str, Any]) -> str:
    """The recorded interpreter when it still exists here, else the one running proveai.

    A CI checkout has a different interpreter path than the laptop that pinned the snapshot.
    """
    recorded = invocation.get("python")
    if recorded and os.path.isfile(recorded) and os.access(recorded, os.X_OK):
        return str(recorded)
    return sys.executable


def resolve_cwd(invocation: Mapping[str, Any], root: Path) -> Path:
    relative = str(invocation.get("cwd") or ".")
    cwd = (root / relative).resolve() if not os.path.isabs(relative) else Path(relative)
    if not cwd.is_dir():
        raise ProveAIError(
            f"the recorded working folder {relative!r} does not exist under {root}",
            suggestions=["re-pin from the folder you run the pipeline in: proveai snapshot init"],
        )
    return cwd


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

    Raises ProveAIError (exit 2) when the command cannot start or exceeds `timeout_s`; the
    child and everything it started are killed on timeout.
    """
    reason = why_not_rerunnable(invocation)
    if reason:
        raise ProveAIError(f"cannot re-run the pipeline: {reason}", exit_code=ProveAIExit.USAGE)
    root = root or project_root()
    cwd = resolve_cwd(invocation, root)
    command = build_command(invocation, resolve_python(invocation))
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

