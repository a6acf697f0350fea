"""A store of four hand-made traces (good, bad, unchecked, three days old) for status and list."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from proveai import FileExporter, Trace, monitor, regex_match, trace
from tests.conftest import isolated_env, run_on_terminal


@monitor("classify", version="v3")
def classify(text: str) -> str:
    return text


@monitor("draft", version="v4")
def draft(text: str) -> str:
    return text


@pytest.fixture(name="store")  # tests ask for `store`
def status_store(workdir: Path) -> dict[str, str]:
    """Four traces in ./proveai/traces: good, bad, unchecked, and a 3-day-old good one."""
    root = workdir / "proveai" / "traces"
    exporter = FileExporter(root)
    old = Trace.closed(
        trace_id="a" * 32, name="old", service_name="old", spans=[], invocation=None, outcome="good",
        started_ns=time.time_ns() - 3 * 86400 * 10**9, ended_ns=time.time_ns() - 3 * 86400 * 10**9 + 1,
    )
    exporter.export(old)
    ids = {"old": old.trace_id}
    with trace("t", exporters=[exporter], checks=[regex_match("classify", "ok")]) as t:
        classify("ok")
    ids["good"] = t.trace_id
    with trace("t", exporters=[exporter], checks=[regex_match("classify", "ok")]) as t:
        classify("no")
        draft("x")
    ids["bad"] = t.trace_id
    with trace("t", exporters=[exporter]) as t:
        draft("y")
    ids["plain"] = t.trace_id
    return ids


def columns(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def rows(stdout: str) -> list[list[str]]:
    return [columns(line) for line in stdout.splitlines()[1:]]


def run_in_terminal(args: list[str], cwd: Path, home: Path) -> str:
    """Run the console script with a pseudo-terminal as stdout; return what it drew."""
    env = isolated_env(home, {"TERM": "xterm-256color"})
    code, drawn, errors = run_on_terminal("proveai", args, cwd, env, timeout=60)
    assert code == 0, errors
    return drawn


HEAVY_IMPORTS = """
import sys
from proveai.cli import main
for argv in (["--help"], ["run", "--help"], ["status", "--help"], ["baseline", "create", "--help"],
             ["experiment", "new", "--help"], ["calibrate", "--help"], ["list", "--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
heavy = ("httpx", "scipy", "pyarrow", "pandas", "torch", "numpy", "jinja2", "rich.table", "yaml")
print(sorted(name for name in heavy if name in sys.modules))
"""


@monitor("[bold]agent", version="[/oops]")
def markup_named(text: str) -> str:
    return text
