"""The store lock between real processes: a second writer waits for the first, a killed holder frees it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

from proveai.store.traces.lock import LOCK, store_lock
from tests.conftest import isolated_env

# takes the lock, says so, then holds it until killed or told to go on
HOLDER = """
import sys, pathlib
from proveai.store.traces.lock import store_lock
root = pathlib.Path(sys.argv[1])
print("trying", flush=True)
with store_lock(root):
    (root / "taken").write_text("yes")
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def start_holder(root: Path, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)], env=isolated_env(home), text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def lock_taken_within(root: Path, seconds: float) -> bool:
    """Whether this process gets the lock within `seconds` (store_lock itself blocks)."""
    got = threading.Event()

    def take() -> None:
        with store_lock(root):
            got.set()

    threading.Thread(target=take, daemon=True).start()
    return got.wait(seconds)


def test_a_second_process_waits_until_the_first_lets_go(tmp_path: Path, home: Path) -> None:
    with store_lock(tmp_path):
        child = start_holder(tmp_path, home)
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline() == "trying\n"
        child_got_in = threading.Event()
        threading.Thread(target=lambda: child.stdout.readline() and child_got_in.set(), daemon=True).start()
        assert not child_got_in.wait(0.5)  # blocked while this process holds the lock
        assert not (tmp_path / "taken").exists()
    assert child_got_in.wait(20)  # let go: the waiting process gets it
    assert (tmp_path / "taken").read_text() == "yes"
    assert not lock_taken_within(tmp_path, 0.5)  # and now this process waits for it
    out, err = child.communicate("go\n", timeout=20)
    assert child.returncode == 0, err
    assert out == "released\n"
    assert lock_taken_within(tmp_path, 20)
    assert (tmp_path / LOCK).exists()  # the lock file stays; only the flock is released


def test_a_holder_killed_mid_write_does_not_leave_the_store_locked(tmp_path: Path, home: Path) -> None:
    child = start_holder(tmp_path, home)
    assert child.stdout is not None
    assert child.stdout.readline() == "trying\n" and child.stdout.readline() == "held\n"
    assert not lock_taken_within(tmp_path, 0.5)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=20)
    assert child.returncode == -signal.SIGKILL
    assert lock_taken_within(tmp_path, 20)
