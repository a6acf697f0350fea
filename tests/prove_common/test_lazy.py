"""lazy_exports: a package's public names imported on first read, then plain attributes; an
unknown name fails as Python's own; `dir()` and `import *` see every name. Each case runs in
a fresh interpreter against a package written for it, so what was imported is observable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import isolated_env

PACKAGE = '''
from prove_common.lazy import lazy_exports

__all__ = ["Thing", "helper", "tools", "renamed"]
__getattr__, __dir__ = lazy_exports(__name__, {
    "Thing": "toypkg.things:Thing",
    "helper": "toypkg.things:helper",
    "renamed": "toypkg.things:original",
    "tools": "toypkg.tools",
})
'''
THINGS = '''
class Thing:
    pass

def helper():
    return "helped"

original = "the original"
'''


def run(tmp_path: Path, code: str) -> dict:
    package = tmp_path / "toypkg"
    if not package.exists():
        package.mkdir()
        (package / "__init__.py").write_text(PACKAGE)
        (package / "things.py").write_text(THINGS)
        (package / "tools.py").write_text("NAME = 'tools'\n")
    env = isolated_env(tmp_path, {"PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])})
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_name_is_imported_on_first_read_then_stored(tmp_path: Path) -> None:
    facts = run(tmp_path, """
        import json, sys
        import toypkg
        before = "toypkg.things" in sys.modules
        first = toypkg.helper()
        stored = "helper" in vars(toypkg)
        print(json.dumps({
            "before": before, "first": first, "stored": stored,
            "same": toypkg.Thing is sys.modules["toypkg.things"].Thing,
            "renamed": toypkg.renamed,
            "module": toypkg.tools.NAME,
            "tools_loaded_by_things": "toypkg.tools" in sys.modules,
        }))
    """)
    assert facts == {
        "before": False,  # `import toypkg` loads none of its names
        "first": "helped",
        "stored": True,  # the next read is a plain attribute: __getattr__ is not called again
        "same": True,
        "renamed": "the original",  # "module:attribute" when the names differ
        "module": "tools",  # "module" alone: the module itself
        "tools_loaded_by_things": True,
    }


def test_every_import_form_resolves_and_dir_lists_every_name(tmp_path: Path) -> None:
    facts = run(tmp_path, """
        import json
        from toypkg import Thing, renamed
        from toypkg import *
        import toypkg
        print(json.dumps({
            "star": sorted(n for n in ("Thing", "helper", "tools", "renamed") if n in globals()),
            "dir": [n for n in dir(toypkg) if not n.startswith("__")],
            "from": [Thing.__name__, renamed],
        }))
    """)
    assert facts["star"] == ["Thing", "helper", "renamed", "tools"]
    assert facts["dir"] == sorted(facts["dir"])
    assert {"Thing", "helper", "renamed", "tools"} <= set(facts["dir"])
    assert facts["from"] == ["Thing", "the original"]


@pytest.mark.parametrize("read", ["toypkg.missing", "getattr(toypkg, 'missing')"])
def test_an_unknown_name_fails_as_pythons_own(tmp_path: Path, read: str) -> None:
    facts = run(tmp_path, f"""
        import json, toypkg
        try:
            {read}
        except AttributeError as exc:
            print(json.dumps({{"message": str(exc), "hasattr": hasattr(toypkg, "missing")}}))
    """)
    assert facts == {"message": "module 'toypkg' has no attribute 'missing'", "hasattr": False}
