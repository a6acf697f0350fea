"""The target: a real module written to a folder and imported by name, each way it can go wrong
one TargetError whose sentence names the target, and a good one imported once per process."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from poisson_prove.episode.run import Job
from poisson_prove.episode.target import TargetError, TargetExitedError, import_target, load_target

_NAMES = itertools.count()


def _module(folder: Path, body: str) -> str:
    """A module of its own name (a name never imported before in this process) in `folder`."""
    name = f"target_{next(_NAMES)}_{folder.name}".replace("-", "_")
    (folder / f"{name}.py").write_text(body)
    return name


def test_a_good_target_is_its_function_with_the_spec_folder_first_on_the_path(tmp_path: Path) -> None:
    name = _module(tmp_path, "def rollout(cfg, seed):\n    return seed * 2\n")
    function = import_target(f"{name}:rollout", str(tmp_path))
    assert function({}, 21) == 42
    assert sys.path[0] == str(tmp_path)


@pytest.mark.parametrize(
    ("body", "attr", "said"),
    [
        ("raise ValueError('no key\\nsecond line')\n", "rollout", "does not import: ValueError: no key"),
        ("import os\nos._exit(0)\n", "rollout", "called os._exit(0) while importing"),
        ("x = 1\n", "rollout", "has no rollout"),
        ("rollout = 3\n", "rollout", "is not a function (it is int)"),
        ("def rollout(cfg):\n    pass\n", "rollout", "does not take (cfg, seed)"),
    ],
)
def test_each_wrong_target_is_one_target_error(tmp_path: Path, body: str, attr: str, said: str) -> None:
    name = _module(tmp_path, body)
    with pytest.raises(TargetError) as caught:
        import_target(f"{name}:{attr}", str(tmp_path))
    assert said in caught.value.message
    assert f'target "{name}:{attr}"' in caught.value.message
    assert "\n" not in caught.value.message  # one line: the first of the exception's own


def test_a_target_calling_sys_exit_while_importing_keeps_its_status(tmp_path: Path) -> None:
    name = _module(tmp_path, "import sys\nsys.exit(7)\n")
    with pytest.raises(TargetExitedError) as caught:
        import_target(f"{name}:rollout", str(tmp_path))
    assert caught.value.exit_status == 7
    assert "called sys.exit(7) while importing" in caught.value.message


def test_a_missing_module_says_how_to_see_the_whole_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as caught:
        import_target("no_such_module_anywhere:rollout", str(tmp_path))
    assert "ModuleNotFoundError" in caught.value.message
    assert any("python -c 'import no_such_module_anywhere'" in s for s in caught.value.suggestions)


def test_load_target_imports_once_per_target_and_folder(tmp_path: Path) -> None:
    counter = tmp_path / "imports.txt"
    body = f"open({str(counter)!r}, 'a').write('x')\ndef rollout(cfg, seed):\n    return seed\n"
    name = _module(tmp_path, body)
    job = Job("run", f"{name}:rollout", str(tmp_path), ["ok"])
    first = load_target(job)
    assert load_target(job) is first
    assert counter.read_text() == "x"
