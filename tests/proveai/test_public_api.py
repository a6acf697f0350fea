"""proveai's public names, as httpx checks its own (tests/test_exported_members.py): `__all__` is
the package's public members; the `TYPE_CHECKING` imports type checkers read and the
lazy map the interpreter reads name the same object for each; every name resolves whatever was
imported first (each order in a fresh interpreter); and a type checker sees each name's type,
never Any. `proveai.Trace` is the record `load_trace` returns; `trace()` returns its live
subclass `proveai.capture.LiveTrace`, which `Trace(...)` builds too (the SDK readme's form)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import proveai
import proveai.engine
from tests.conftest import isolated_env
from tests.public_api_kit import SRC, declared, public_members


@pytest.mark.parametrize("package", ["proveai", "proveai.engine"])
def test_all_is_the_public_members(package: str, tmp_path: Path) -> None:
    names = importlib.import_module(package).__all__  # in ruff's order (RUF022): constants first
    assert len(set(names)) == len(names)
    assert sorted(names) == public_members(package, tmp_path)


@pytest.mark.parametrize("package", ["proveai", "proveai.engine"])
def test_type_checkers_and_the_interpreter_read_the_same_names(package: str) -> None:
    typed, lazy, own = declared(SRC / package.replace(".", "/") / "__init__.py")
    assert typed == lazy  # each name imported for type checkers is the one served at run time
    assert sorted([*lazy, *own]) == sorted(importlib.import_module(package).__all__)
    for name, where in lazy.items():
        module, _, attribute = where.partition(":")
        served = getattr(importlib.import_module(package), name)
        found = importlib.import_module(module)
        assert served is (getattr(found, attribute) if attribute else found), name


FIRST = {
    "package": "import proveai",
    "star": "from proveai import *",
    "record-first": "import proveai.traces.trace",
    "live-first": "from proveai.capture import LiveTrace",
    "capture-module": "import proveai.capture.trace",
    "loader-first": "from proveai.store.traces.load import load_trace",
    "engine": "from proveai.engine import ProveAI, on_detection",
    "function-first": "import proveai; proveai.trace",
}

CHECK = """
import json, tempfile
from pathlib import Path
{first}
import proveai, proveai.capture, proveai.traces.trace
from proveai import *
from proveai import __all__ as names
missing = [n for n in names if not hasattr(proveai, n)]
folder = Path(tempfile.mkdtemp())
with proveai.Trace(exporters=[proveai.FileExporter(folder)]) as opened:
    pass
with proveai.trace("svc", exporters=[proveai.FileExporter(folder)]) as live:
    pass
loaded = proveai.load_trace(folder / f"{live.trace_id}.json")
print(json.dumps({
    "missing": missing,
    "star": [n for n in names if n not in globals()],
    "record": proveai.Trace is proveai.traces.trace.Trace,
    "loaded_is_Trace": type(loaded) is proveai.Trace,
    "live": type(live) is proveai.capture.LiveTrace and isinstance(live, proveai.Trace),
    "opened": type(opened).__name__,
    "closed": [opened.is_closed, live.is_closed, loaded.is_closed],
    "error": issubclass(proveai.ProveAIError, Exception),
    "version": proveai.__version__,
    "mock": proveai.mock.__name__,
}))
"""


@pytest.mark.parametrize("first", list(FIRST))
def test_every_name_resolves_in_any_import_order(first: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", CHECK.replace("{first}", FIRST[first])],
        cwd=tmp_path, env=isolated_env(tmp_path), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "missing": [],
        "star": [],
        "record": True,
        "loaded_is_Trace": True,
        "live": True,
        "opened": "LiveTrace",  # Trace(...) opens a live trace, as the readme writes it
        "closed": [True, True, True],
        "error": True,
        "version": proveai.__version__,
        "mock": "proveai.mock",
    }


def test_a_type_checker_sees_every_name_typed(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the dev extra")
    reveals = [f"reveal_type(proveai.{name})" for name in proveai.__all__]
    reveals += [f"reveal_type(proveai.engine.{name})" for name in proveai.engine.__all__]
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "import proveai\nimport proveai.engine\n"
        + "\n".join(reveals)
        + '\nreveal_type(proveai.load_trace("t.json"))\nreveal_type(proveai.trace())\n'
        "with proveai.Trace(exporters=[]) as t:\n    reveal_type(t)\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache"),
         str(snippet)],
        cwd=tmp_path, env=isolated_env(tmp_path), capture_output=True, text=True, timeout=300,
    )
    types = [line.split("Revealed type is ", 1)[1].strip('"') for line in result.stdout.splitlines()
             if "Revealed type is" in line]
    assert len(types) == len(reveals) + 3, result.stdout + result.stderr
    names = [*proveai.__all__, *(f"engine.{n}" for n in proveai.engine.__all__)]
    assert [name for name, seen in zip(names, types, strict=False) if seen == "Any"] == []
    assert types[-3:] == [
        "proveai.traces.trace.Trace",  # load_trace returns the record, proveai.Trace
        "proveai.capture.trace.LiveTrace",  # trace() returns the live session
        "proveai.traces.trace.Trace",
    ]
    assert result.returncode == 0, result.stdout
