"""snapshot/trust.py and the re-run's limits, through the installed `proveai snapshot verify`: an
edited invocation with its hash recomputed (the integrity hash is no signature) runs nothing but
a script of the project under this interpreter, and an invocation no reviewed revision holds is
shown, and refused in CI unless trusted. A real git repository and the fake model server."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proveai.snapshot.model import content_hash
from tests.conftest import CLI, assert_clean_error, isolated_env
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import git, make_project, pinned_project, run_pipeline, server_env

MARKER_SCRIPT = """
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text("ran")
"""


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj").parent


def snapshot_file(project: Path) -> Path:
    return project / "proveai" / "snapshots" / "latest.json"


def tamper(project: Path, **changes: Any) -> dict[str, Any]:
    """Edit the pinned invocation as an attacker would: the change, then the hash recomputed."""
    path = snapshot_file(project)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["invocation"].update(changes)
    data["invocation_hash"] = content_hash(data["invocation"])
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return data["invocation"]


def commit_all(project: Path, message: str) -> None:
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", message)


def test_a_tampered_command_is_refused_and_nothing_runs(
    project: Path, server: ModelServer, home: Path
) -> None:
    cli, env = pinned_project(project, server, home)
    pwned = project / "PWNED"
    tamper(project, python="/bin/sh", argv=["-c", f"touch {pwned}; echo pwned"], script=None)
    result = cli("snapshot", "verify", env=env)
    assert_clean_error(
        result, 2,
        f"error: snapshot 'latest' asks to run /bin/sh -c 'touch {pwned}; echo pwned': "
        "/bin/sh is not a Python interpreter",
        "next: a snapshot file is code",
    )
    assert not pwned.exists()


@pytest.mark.parametrize(
    ("where", "changes", "reason"),
    [
        ("outside", {"cwd": "../../../../.."}, "its working folder '../../../../..' is outside the project"),
        ("outside", {"cwd": "/"}, "its working folder '/' is outside the project"),
        ("script", {}, "is outside the project"),
        ("python", {"argv": ["-c", "import pathlib; pathlib.Path('MARK').touch()"]}, "it runs no script"),
        ("python", {"argv": ["-m", "this"]}, "the module this is "),
        ("python", {"argv": ["-X", "pycache_prefix=/tmp", "pipeline.py"]}, "-X pycache_prefix=/tmp"),
        ("python", {"python": "/usr/bin/perl"}, "/usr/bin/perl is not a Python interpreter"),
    ],
)
def test_an_invocation_that_leaves_the_project_is_refused_naming_what_it_asked(
    project: Path, server: ModelServer, home: Path, tmp_path: Path, where: str, changes: dict, reason: str
) -> None:
    cli, env = pinned_project(project, server, home)
    marker = tmp_path / "ran"
    outside = tmp_path / "elsewhere.py"  # beside the project, not in it
    outside.write_text(MARKER_SCRIPT, encoding="utf-8")
    if where == "script":
        changes = {"argv": [str(outside), str(marker)], "script": str(outside)}
    elif where == "outside":
        changes = {**changes, "argv": [str(outside), str(marker)]}
    invocation = tamper(project, **changes)
    result = cli("snapshot", "verify", env=env)
    asked = shlex.join([invocation["python"], *invocation["argv"]])
    assert_clean_error(result, 2, f"error: snapshot 'latest' asks to run {asked}", reason)
    assert not marker.exists() and not (project / "MARK").exists()


def test_another_python_that_exists_here_is_refused_and_a_missing_one_is_replaced(
    project: Path, server: ModelServer, home: Path, tmp_path: Path
) -> None:
    cli, env = pinned_project(project, server, home)
    impostor = tmp_path / "bin" / "python3"
    impostor.parent.mkdir()
    impostor.write_text(f"#!/bin/sh\ntouch {tmp_path / 'impostor-ran'}\n", encoding="utf-8")
    impostor.chmod(0o755)
    tamper(project, python=str(impostor))
    refused = cli("snapshot", "verify", env=env)
    assert_clean_error(refused, 2, f"{impostor} is not the interpreter running proveai ({sys.executable})")
    assert not (tmp_path / "impostor-ran").exists()
    # a CI runner lacks the laptop's interpreter: the one running proveai runs the script
    tamper(project, python="/home/someone/proj/.venv/bin/python3.11")
    passed = cli("snapshot", "verify", "--trust-invocation", env=env)
    assert passed.returncode == 0, passed.stderr


def test_a_module_of_the_project_runs(tmp_path: Path, server: ModelServer, home: Path) -> None:
    project = tmp_path / "mod"
    make_project(project, package=True)
    env = server_env(server.openai_url)
    assert run_pipeline(project, isolated_env(home, env), module=True).returncode == 0
    cli = CLI("proveai", project, home)
    assert cli("snapshot", "init", env=env).returncode == 0
    verified = cli("snapshot", "verify", env=env)
    assert verified.returncode == 0, verified.stderr
    assert "warning" not in verified.stderr  # init trusted what it pinned


def test_in_ci_a_changed_invocation_is_refused_until_trusted(
    project: Path, server: ModelServer, home: Path
) -> None:
    cli, env = pinned_project(project, server, home)
    commit_all(project, "pin")
    git(project, "checkout", "-q", "-b", "feature")
    ci = {**env, "CI": "true", "GITHUB_BASE_REF": "main"}
    assert cli("snapshot", "verify", "latest", env=ci).returncode == 0  # as main committed it

    (project / "marker.py").write_text(MARKER_SCRIPT, encoding="utf-8")
    tamper(project, argv=["marker.py", "MARKED"], script="marker.py")
    commit_all(project, "a changed invocation, hash recomputed")
    py = sys.executable
    refused = cli("snapshot", "verify", env=ci)
    assert_clean_error(
        refused, 2,
        f"error: snapshot 'latest' asks to run {py} marker.py MARKED, changed since main, where it ran "
        f"{py} pipeline.py: in CI a changed invocation runs only when trusted",
        "next: a snapshot file is code: review what the invocation runs, then proveai snapshot verify "
        "--trust-invocation",
    )
    assert not (project / "MARKED").exists()

    trusted = cli("snapshot", "verify", "--trust-invocation", env=ci)
    assert (project / "MARKED").exists()  # it ran (and wrote no trace, so verify says so)
    assert trusted.returncode == 2 and "wrote no trace" in trusted.stderr
    assert (
        f"warning: snapshot 'latest' runs {py} marker.py MARKED, changed since main, where it ran "
        f"{py} pipeline.py: trusted from now on (--trust-invocation)"
    ) in trusted.stderr
    # a CI cache can restore the local record: in CI only a reviewed revision counts
    (project / "MARKED").unlink()
    assert_clean_error(cli("snapshot", "verify", env=ci), 2, "changed since main")
    assert not (project / "MARKED").exists()


def test_in_ci_a_snapshot_the_base_lacks_is_refused(project: Path, server: ModelServer, home: Path) -> None:
    git(project, "checkout", "-q", "-b", "feature")
    cli, env = pinned_project(project, server, home)
    commit_all(project, "a new snapshot")
    refused = cli("snapshot", "verify", env={**env, "CI": "1", "GITHUB_BASE_REF": "main"})
    assert_clean_error(refused, 2, f"asks to run {sys.executable} pipeline.py, not committed at main")
    # without a base (a push build) the committed HEAD is the reviewed revision
    pushed = cli("snapshot", "verify", env={**env, "CI": "1"})
    assert pushed.returncode == 0, pushed.stderr


def test_outside_ci_a_changed_invocation_is_shown_and_runs(
    project: Path, server: ModelServer, home: Path
) -> None:
    cli, env = pinned_project(project, server, home)
    commit_all(project, "pin")
    tamper(project, argv=["pipeline.py", "Another ticket"])
    py = sys.executable
    shown = cli("snapshot", "verify", env=env)
    assert shown.returncode in (0, 1), shown.stderr  # graded: it ran
    warning = (
        f"warning: snapshot 'latest' runs {py} pipeline.py 'Another ticket', changed since HEAD, where it "
        f"ran {py} pipeline.py: review it; --trust-invocation stops this warning"
    )
    assert warning in shown.stderr
    assert warning in cli("snapshot", "verify", env=env).stderr  # until trusted
    cli("snapshot", "verify", "--trust-invocation", env=env)
    after = cli("snapshot", "verify", env=env)
    assert "warning: snapshot" not in after.stderr, after.stderr
    record = json.loads((project / "proveai" / "snapshots" / ".trusted_invocations.json").read_text())
    assert {entry["command"] for entry in record.values()} >= {f"{py} pipeline.py 'Another ticket'"}
    ignored = git(project, "check-ignore", "proveai/snapshots/.trusted_invocations.json")
    assert ignored.strip() == "proveai/snapshots/.trusted_invocations.json"
