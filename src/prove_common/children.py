"""Child processes that leave nothing behind: each child leads its own session (so its own
process group), and a timeout, a cancel or Ctrl-C SIGKILLs the whole group, grandchildren
included.

Two users: the sweep's episode children (backends/_children.py, long-lived `multiprocessing`
children that call `os.setsid()` themselves and are killed with `kill_group`) and one-shot
commands such as a snapshot re-run (`run_child`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["FinishedChild", "kill_group", "run_child"]


def kill_group(pid: int) -> bool:
    """SIGKILL the process group led by `pid` (a child started in its own session).

    True when the signal was sent; False when the group is already gone or not ours (the
    caller then kills the child itself).
    """
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


@dataclass(frozen=True)
class FinishedChild:
    """How a one-shot child ended: its exit code (negative: the signal that ended it) and
    whether the timeout stopped it."""

    argv: tuple[str, ...]
    returncode: int
    timed_out: bool


def _kill(process: subprocess.Popen[bytes]) -> None:
    if not kill_group(process.pid):
        try:
            process.kill()
        except ProcessLookupError:
            pass


def run_child(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
    stdin: IO[bytes] | int | None = subprocess.DEVNULL,
) -> FinishedChild:
    """Run `argv` to its end in its own session; on timeout kill its whole process group.

    Raises OSError when the command cannot start. Any exception while waiting (Ctrl-C
    included) kills the group before it propagates, so nothing the child started outlives it.
    A timer does the killing so the wait blocks in waitpid instead of polling
    (`Popen.wait(timeout=)` sleeps in steps, adding up to 50 ms per run).
    """
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )
    timed_out = threading.Event()
    timer: threading.Timer | None = None
    if timeout is not None:

        def stop() -> None:
            timed_out.set()
            _kill(process)

        timer = threading.Timer(timeout, stop)
        timer.daemon = True
        timer.start()
    try:
        returncode = process.wait()
    except BaseException:
        _kill(process)
        process.wait()
        raise
    finally:
        if timer is not None:
            timer.cancel()
    if timed_out.is_set():
        # the child is gone; whatever it started may have outlived the first signal
        kill_group(process.pid)
    return FinishedChild(argv=tuple(argv), returncode=returncode, timed_out=timed_out.is_set())
