"""The project layout under ./proveai/: where each artifact lives, the project folder, the trace files
of a real store, the one rule for names that become files, and the lock in proveai's terms."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from proveai import regex_match
from proveai.errors import ProveAIError, ProveAIExit
from proveai.store import TRACES_ENV, Store, check_name, project_root, trace_files
from proveai.store.layout import lock
from proveai.store.traces.index import read_index
from tests.conftest import isolated_env
from tests.proveai.store.store_kit import capture

# takes a lock, says so, holds it until told to go on
HOLDER = """
import sys
from prove_common.files import lock
with lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_the_layout_and_the_traces_env_only_for_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path)
    assert store.base == tmp_path / "proveai"
    names = ("traces", "snapshots", "runs", "baselines", "experiments")
    assert [getattr(store, f"{name}_dir") for name in names] == [store.base / name for name in names]
    monkeypatch.setenv(TRACES_ENV, str(tmp_path / "elsewhere"))
    assert Store().traces_dir == tmp_path / "elsewhere"
    assert Store(tmp_path).traces_dir == tmp_path / "proveai" / "traces"  # an explicit project keeps its own


def test_the_project_is_the_nearest_folder_with_git_or_pyproject(tmp_path: Path) -> None:
    nested = tmp_path / "repo" / "pkg" / "agents"
    nested.mkdir(parents=True)
    assert project_root(nested) == nested.resolve()  # none above: the start itself
    (tmp_path / "repo" / ".git").mkdir()
    assert project_root(nested) == (tmp_path / "repo").resolve()
    (tmp_path / "repo" / "pkg" / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    assert project_root(nested) == (tmp_path / "repo" / "pkg").resolve()


def test_trace_files_of_a_real_store_are_the_traces_only(tmp_path: Path) -> None:
    traces = [capture(tmp_path, checks=[regex_match("lookup", "found")]) for _ in range(3)]
    read_index(tmp_path)  # writes manifest.json
    (tmp_path / ".half-written.json.tmp").write_text("{")
    (tmp_path / ".editor.json").write_text("{}")
    assert (tmp_path / "manifest.json").exists()
    assert len(list(tmp_path.glob("*.detection.json"))) == 3
    assert sorted(p.stem for p in trace_files(tmp_path)) == sorted(t.trace_id for t in traces)


@pytest.mark.parametrize("name", ["latest", "weekly-goods", "v1.2_rc", "9" * 100])
def test_usable_names_pass_unchanged(name: str) -> None:
    assert check_name("baseline", name) == name


@pytest.mark.parametrize("name", ["", "../escape", "a/b", "-rf", ".hidden", "x" * 101, "spaced name"])
def test_names_that_are_not_file_names_are_one_clear_error(name: str) -> None:
    with pytest.raises(ProveAIError) as caught:
        check_name("snapshot", name)
    assert caught.value.message == f"invalid snapshot name {name!r}: not usable as a file name"
    assert caught.value.exit_code == ProveAIExit.USAGE and "letters, digits" in caught.value.suggestions[0]


def test_a_lock_held_past_the_timeout_is_a_proveai_error_with_the_io_code(tmp_path: Path, home: Path) -> None:
    path = tmp_path / ".lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], env=isolated_env(home), text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(ProveAIError) as caught:
        lock(path, timeout=0.2)
    assert caught.value.message == f"{path} is locked by another process (waited 0.2 s)"
    assert caught.value.exit_code == ProveAIExit.USAGE  # never REGRESSION's 1: nothing was graded
    holder.communicate("go on\n", timeout=20)
    with lock(path, timeout=20):
        pass
