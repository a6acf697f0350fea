"""What an agent call read and imported, recorded at capture: one real pipeline in a fresh
interpreter, its trace file read back with json (the OTLP attributes), not with proveai."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from proveai.capture.reads import files_of, imports_of

AGENTS = '''\
import os
from pathlib import Path

import helpers
from proveai import monitor


@monitor("inner")
def inner(text):
    return text + Path("prompts/inner.md").read_text()


@monitor("outer")
def outer(text):
    prompt = Path("prompts/outer.md").read_text()              # relative to the cwd
    config = open(os.path.abspath("data/config.json")).read()  # absolute
    fd = os.open("notes.txt", os.O_RDONLY)                     # the os-level open
    os.close(fd)
    with open("out.log", "w") as log:                          # written only: not an input
        log.write("x")
    os.makedirs("proveai/cache", exist_ok=True)
    Path("proveai/cache/entry.json").write_text("{}")
    Path("proveai/cache/entry.json").read_text()               # proveai's own store: not the agent's
    open(os.__file__).close()                                  # the standard library: not the project's
    import lazy_mod                                            # first imported during the call
    return inner(helpers.shout(prompt + config)) + lazy_mod.VALUE


@monitor("plain")
def plain(text):
    return text
'''

PIPELINE = '''\
from pathlib import Path

from proveai import FileExporter, trace
import agents

with trace("reads", exporters=[FileExporter()]):
    Path("between.md").read_text()  # inside the trace, outside any agent: no agent read it
    agents.outer("go")
    agents.plain("x")
'''

FILES = {
    "pyproject.toml": '[project]\nname = "r"\nversion = "0"\n',
    "agents.py": AGENTS,
    "pipeline.py": PIPELINE,
    "helpers.py": "from pkg import util\n\ndef shout(text):\n    return util.up(text)\n",
    "pkg/__init__.py": "",
    "pkg/util.py": "from .deep import strip\n\ndef up(text):\n    return strip(text).upper()\n",
    "pkg/deep.py": "def strip(text):\n    return text.strip()\n",
    "lazy_mod.py": "VALUE = '!'\n",
    "unused.py": "X = 1\n",
    "prompts/outer.md": "outer prompt ",
    "prompts/inner.md": " inner prompt",
    "data/config.json": "{}",
    "notes.txt": "n",
    "between.md": "b",
}


def make(root: Path) -> None:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def spans_of_trace_file(root: Path) -> dict[str, dict[str, object]]:
    (path,) = [p for p in (root / "proveai" / "traces").glob("*.json") if len(p.stem) == 32]
    document = json.loads(path.read_text(encoding="utf-8"))
    found = {}
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        attrs = {a["key"]: a["value"].get("stringValue") for a in span["attributes"]}
        keys = ("proveai.reads", "proveai.imports")
        found[attrs["gen_ai.agent.name"]] = {k: json.loads(attrs[k]) if k in attrs else None for k in keys}
    return found


def test_a_call_records_the_project_files_it_read_and_the_modules_it_imports(tmp_path: Path) -> None:
    root = tmp_path / "project"
    make(root)
    ran = subprocess.run(
        [sys.executable, "pipeline.py"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    spans = spans_of_trace_file(root)
    # read for input, inside the project, outside proveai's store and the interpreter's folders
    assert spans["outer"]["proveai.reads"] == ["data/config.json", "notes.txt", "prompts/outer.md"]
    # the agent module's imports, transitively (relative ones too), and a module first loaded in the call
    assert spans["outer"]["proveai.imports"] == ["helpers.py", "lazy_mod.py", "pkg/__init__.py",
                                                 "pkg/deep.py", "pkg/util.py"]
    # a nested agent's reads are its own; its imports are its module's (function-level ones too)
    assert spans["inner"]["proveai.reads"] == ["prompts/inner.md"]
    assert spans["inner"]["proveai.imports"] == spans["outer"]["proveai.imports"]
    # recorded and empty is not the same as not recorded
    assert spans["plain"]["proveai.reads"] == []


def test_paths_outside_the_project_or_written_by_proveai_are_left_out(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "__pycache__").mkdir(parents=True)
    (root / "proveai").mkdir()
    outside = tmp_path / "elsewhere.md"
    opened = [
        str(root / "a.md"), str(root / "a.md"), str(outside), str(root / "proveai" / "x.json"),
        str(root / "__pycache__" / "m.cpython-311.pyc"), str(root / ".git" / "HEAD"),
        str(root / ".venv" / "lib" / "site-packages" / "dep.py"),
    ]
    assert files_of(opened, str(root)) == (("a.md",), ("m.py",))
    assert imports_of(None, None, str(root)) == ()  # no module and no file: nothing to follow
