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
from proveai.snapshot.rerun import InvocationRefused, checked_command, rerun

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


# ---- what a re-run may run: checked before anything starts --------------------------------------

MARKER = "import pathlib, sys\npathlib.Path(sys.argv[1]).write_text('ran')\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    (root / "pipeline.py").write_text(MARKER, encoding="utf-8")
    imported = "raise SystemExit('imported while checking')\n"  # finding a module must not run its package
    (root / "pkg" / "__init__.py").write_text(imported, encoding="utf-8")
    (root / "pkg" / "main.py").write_text(MARKER, encoding="utf-8")
    (root / "pkg" / "__main__.py").write_text(MARKER, encoding="utf-8")
    return root


def test_the_rerun_is_this_interpreter_running_the_recorded_arguments(project: Path) -> None:
    inside = {"python": "/home/someone/.venv/bin/python3.12", "cwd": ".", "script": "pipeline.py"}
    command, cwd = checked_command({**inside, "argv": ["-X", "utf8", "-u", "pipeline.py", "a b"]}, project)
    assert command == [sys.executable, "-X", "utf8", "-u", "pipeline.py", "a b"]
    assert cwd == project.resolve()
    # modules are found as the child finds them, without importing their packages
    assert checked_command({**inside, "argv": ["-m", "pkg.main"], "module": "pkg.main"}, project)[0][1:] == [
        "-m", "pkg.main"
    ]
    assert checked_command({**inside, "argv": ["-mpkg"], "module": "pkg"}, project)[0][1:] == ["-mpkg"]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"python": "/bin/sh", "argv": ["-c", "MARK"]}, "/bin/sh is not a Python interpreter"),
        ({"python": "C:\\Tools\\node.exe"}, "is not a Python interpreter"),
        ({"argv": ["-c", "MARK"]}, "it runs no script or module (run with python -c"),
        ({"argv": ["-", "MARK"]}, "it runs no script or module (the script was read from stdin)"),
        ({"argv": ["OUTSIDE", "MARK"]}, "outside.py is outside the project"),
        ({"argv": ["link.py", "MARK"]}, "the script link.py is outside the project"),
        ({"argv": ["pipeline.py", "MARK"], "cwd": ".."}, "its working folder '..' is outside the project"),
        ({"argv": ["pipeline.py", "MARK"], "cwd": "out"}, "its working folder 'out' is outside the project"),
        ({"argv": ["-m", "json.tool", "MARK"], "module": "json.tool"}, "the module json.tool is /"),
        ({"argv": ["-m", "nowhere.at_all"], "module": "nowhere.at_all"}, "not found in the project"),
        ({"argv": ["-i", "pipeline.py", "MARK"]}, "the interpreter option -i is not one a re-run may carry"),
        ({"argv": ["-Xpycache_prefix=/tmp", "pipeline.py", "MARK"]}, "option -X pycache_prefix=/tmp"),
    ],
)
def test_an_invocation_leaving_the_project_is_refused_and_nothing_runs(
    project: Path, tmp_path: Path, changes: dict, reason: str
) -> None:
    marker, outside = tmp_path / "ran", tmp_path / "outside.py"
    outside.write_text(MARKER, encoding="utf-8")
    (project / "link.py").symlink_to(outside)
    (project / "out").symlink_to(tmp_path, target_is_directory=True)
    invocation = {"python": sys.executable, "argv": ["pipeline.py", "MARK"], "script": "pipeline.py"}
    invocation.update(changes)
    invocation["argv"] = [
        {"MARK": str(marker), "OUTSIDE": str(outside)}.get(arg, arg) for arg in invocation["argv"]
    ]
    with pytest.raises(InvocationRefused) as refused:
        rerun(invocation, traces_dir=tmp_path / "traces", timeout_s=30, root=project)
    assert refused.value.message.startswith("the recorded invocation asks to run ")
    assert reason in refused.value.message
    assert refused.value.exit_code == ProveAIExit.USAGE
    assert not marker.exists()


def test_the_refusal_names_the_snapshot_that_asked(project: Path) -> None:
    with pytest.raises(InvocationRefused) as refused:
        asked = {"python": "/usr/bin/perl", "argv": ["x.pl"], "script": "x.pl"}
        checked_command(asked, project, snapshot="nightly")
    assert refused.value.message == (
        "snapshot 'nightly' asks to run /usr/bin/perl x.pl: /usr/bin/perl is not a Python interpreter"
    )
    assert (refused.value.snapshot, refused.value.command) == ("nightly", "/usr/bin/perl x.pl")


def test_this_interpreter_under_another_of_its_names_is_this_one(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv's python3 beside its python is the same interpreter; a link elsewhere to the same
    file (as a venv's python is a link to the base interpreter) is another environment."""
    real = Path(sys.executable).resolve()
    venv, other = tmp_path / "venv" / "bin", tmp_path / "other" / "bin"
    for folder in (venv, other):
        folder.mkdir(parents=True)
    for link in (venv / "python", venv / "python3", other / "python3"):
        link.symlink_to(real)
    monkeypatch.setattr(sys, "executable", str(venv / "python"))
    invocation = {"argv": ["pipeline.py"], "script": "pipeline.py"}
    command, _ = checked_command({**invocation, "python": str(venv / "python3")}, project)
    assert command[0] == str(venv / "python")
    with pytest.raises(InvocationRefused) as refused:
        checked_command({**invocation, "python": str(other / "python3")}, project)
    assert f"{other / 'python3'} is not the interpreter running proveai ({venv / 'python'})" in (
        refused.value.message
    )
