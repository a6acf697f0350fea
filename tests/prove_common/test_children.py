"""Children killed for real: a child that starts a grandchild `sleep`, stopped by the timeout
or by Ctrl-C, leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

import pytest

from prove_common.children import kill_group, run_child

# starts a grandchild in the same process group, tells its pid, then hangs
CHILD = """
import subprocess, sys, time
grandchild = subprocess.Popen(["sleep", "137"])
open(sys.argv[1], "w").write(str(grandchild.pid))
print("started", flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def _wait_for_pid(path: Path, within: float = 10.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.02)
    raise AssertionError("the child never started its grandchild")


def test_a_finished_child_reports_its_exit_code(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open(out, "wb") as handle:
        done = run_child(
            [sys.executable, "-c", "import sys; print('hi'); sys.exit(3)"],
            cwd=tmp_path,
            stdout=handle,
            timeout=30,
        )
    assert (done.returncode, done.timed_out) == (3, False)
    assert out.read_text() == "hi\n"


def test_timeout_kills_the_child_and_its_grandchild(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    started = time.monotonic()
    done = run_child(
        [sys.executable, "-c", CHILD, str(pid_file)],
        cwd=tmp_path,
        timeout=2.0,
        stdout=subprocess.DEVNULL,
    )
    assert done.timed_out
    assert done.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 30  # not the child's 60 s nap
    grandchild = _wait_for_pid(pid_file)
    assert _gone(grandchild), f"grandchild sleep {grandchild} outlived the timeout"


def test_ctrl_c_while_waiting_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    # the interrupt arrives once the grandchild is running (the child writes its pid first)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_child([sys.executable, "-c", CHILD, str(pid_file)], cwd=tmp_path, timeout=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    grandchild = _wait_for_pid(pid_file)
    assert _gone(grandchild), f"grandchild sleep {grandchild} outlived Ctrl-C"


def test_kill_group_reaches_every_process_of_a_session(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(pid_file)], cwd=tmp_path, start_new_session=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        grandchild = _wait_for_pid(pid_file)
        assert os.getpgid(grandchild) == child.pid  # the child leads the grandchild's group
        assert kill_group(child.pid)
        assert child.wait(timeout=10) == -signal.SIGKILL
        assert _gone(grandchild)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # a group with no process left: nothing to signal, and no exception
    assert kill_group(_unused_pid()) is False


def _unused_pid() -> int:
    pid = 4_000_000
    while Path(f"/proc/{pid}").exists():
        pid -= 1
    return pid


def test_a_command_that_cannot_start_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        run_child([str(tmp_path / "no-such-program")], cwd=tmp_path, timeout=5)
