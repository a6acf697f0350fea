"""snapshot/rerun.py: a re-run that exceeds its timeout is stopped with everything it started.

A real child process starts a real `sleep` grandchild and outlives a short timeout; after the
refusal no process of that tree may be left running."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.rerun import rerun

PIPELINE = """
import pathlib, subprocess, sys, time
child = subprocess.Popen(["sleep", "137"])
pathlib.Path(sys.argv[1]).write_text(str(child.pid))
time.sleep(137)
"""


def _running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_timed_out_rerun_leaves_no_grandchild(tmp_path: Path) -> None:
    (tmp_path / "pipeline.py").write_text(PIPELINE, encoding="utf-8")
    pid_file = tmp_path / "grandchild.pid"
    invocation = {
        "argv": ["pipeline.py", str(pid_file)],
        "script": "pipeline.py",
        "cwd": ".",
        "python": sys.executable,
    }
    grandchild = None
    try:
        with pytest.raises(ProveAIError) as refused:
            rerun(invocation, traces_dir=tmp_path / "traces", timeout_s=1.5, root=tmp_path)
        assert refused.value.exit_code == ProveAIExit.USAGE
        assert "exceeded the --timeout of 1.5 s" in refused.value.message
        grandchild = int(pid_file.read_text())
        deadline = time.monotonic() + 5
        while _running(grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(grandchild), f"sleep grandchild {grandchild} outlived the timeout"
    finally:
        if grandchild is not None and _running(grandchild):
            with contextlib.suppress(ProcessLookupError):
                os.kill(grandchild, signal.SIGKILL)  # ours: started by this test's child
