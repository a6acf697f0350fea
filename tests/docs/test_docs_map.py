"""docs/README.md's map of the house is the one the code's docstrings give: each package's layer
list and each folder's opening line (scripts/docs_map.py writes it), so the page cannot drift."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "docs_map.py"


def _generator() -> ModuleType:
    """The script itself, loaded as a module: the one generator, never a copy of it."""
    spec = importlib.util.spec_from_file_location("docs_map", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_map_is_what_the_docstrings_say() -> None:
    docs_map = _generator()
    text = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    assert docs_map.rewritten(text) == text, "docs/README.md map is stale: python scripts/docs_map.py --write"


def test_every_layer_names_a_folder_or_module_with_a_docstring() -> None:
    docs_map = _generator()
    for package in ("poisson_prove", "proveai"):
        found = docs_map.layers(package)
        assert [number for number, _, _ in found] == list(range(len(found))), package
        for _, names, _ in found:
            for name in names:
                _, path = docs_map._where(package, name)
                assert path.exists(), f"{package}: layer names {name}, which is not a folder or module"
                assert docs_map._summary(path), f"{package}.{name} has no docstring to describe it"


def test_the_script_prints_the_tables() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert "| layer | folder or module | what it holds |" in done.stdout
