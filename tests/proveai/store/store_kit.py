"""A two-agent pipeline captured into a store, shared by the store's tests, and the temporary
file a killed writer leaves behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from prove_common.files import STALE_AFTER_S
from proveai import FileExporter, monitor, trace
from tests.conftest import isolated_env


@monitor("plan", model="gpt-4o-mini", version="v7", kind="AGENT")
def plan(goal: str) -> dict:
    return {"steps": [lookup(goal), "answer"]}


@monitor("lookup", kind="TOOL", operation="execute_tool", parent_agent="plan")
def lookup(q: str) -> str:
    if q == "fail":
        raise LookupError("no such record")
    return f"found {q}"


def capture(root: Path, goal: str = "refund", checks=None):
    with trace("store-test", exporters=[FileExporter(root)], checks=checks or []) as t:
        try:
            plan(goal)
        except LookupError:
            pass
    return t


# opens the temporary file of sys.argv[1] the way every store writer does, then waits to be killed
_HALF_WRITER = """
import sys
from prove_common.files import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    tmp.write_text("half")
    print(tmp, flush=True)
    sys.stdin.readline()
"""


def killed_writer_temp(final: Path, home: Path) -> Path:
    """The temporary file a writer of `final` leaves when it is killed (SIGKILL) mid-write,
    dated older than a live writer's could be."""
    final.parent.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen(
        [sys.executable, "-c", _HALF_WRITER, str(final)], env=isolated_env(home), text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    left = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=20)
    assert child.returncode == -signal.SIGKILL and left.exists()
    past = left.stat().st_mtime - STALE_AFTER_S - 5
    os.utime(left, (past, past))
    return left
