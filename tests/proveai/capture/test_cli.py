"""`proveai status`, `list`, `analyze`, `validate-fix` through the installed console script."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from proveai import FileExporter, Trace, monitor, record_outcome, regex_match, trace
from tests.conftest import assert_clean_error, isolated_env, run_on_terminal


@monitor("classify", version="v3")
def classify(text: str) -> str:
    return text


@monitor("draft", version="v4")
def draft(text: str) -> str:
    return text


@pytest.fixture
def store(workdir: Path) -> dict[str, str]:
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


def test_version(proveai_cli):
    result = proveai_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == "proveai 0.1.0"


def test_status_columns_newest_first_plain_on_a_pipe(proveai_cli, store):
    result = proveai_cli("status")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and "\x1b" not in result.stdout
    header, *lines = result.stdout.splitlines()
    assert columns(header) == ["Trace ID", "Version", "Agents", "Outcome", "Detection", "Age"]
    ids = [line.split()[0] for line in lines]
    assert ids == [store["plain"], store["bad"], store["good"], store["old"]]
    by_id = {r[0]: r for r in rows(result.stdout)}
    assert by_id[store["good"]][1:5] == ["v3", "classify", "good", "clean"]
    assert re.fullmatch(r"\d+s ago", by_id[store["good"]][5])
    assert by_id[store["bad"]][1:5] == ["v3, v4", "classify, draft", "bad", "flagged"]
    assert by_id[store["plain"]][1:5] == ["v4", "draft", "—", "suspect"]
    assert by_id[store["old"]][1:] == ["—", "—", "good", "clean", "3d ago"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (["outcome=bad"], ["bad"]),
        (["outcome=good"], ["good", "old"]),
        (["outcome=none"], ["plain"]),
        (["detection=flagged"], ["bad"]),
        (["detection=suspect"], ["plain"]),
        (["agent=draft"], ["plain", "bad"]),
        (["version=v3"], ["bad", "good"]),
        (["since=1d"], ["plain", "bad", "good"]),
        (["outcome=good", "since=2d"], ["good"]),
        (["agent=draft", "detection=clean"], []),
    ],
)
def test_status_filters_are_anded(proveai_cli, store, filters, expected):
    args = [arg for f in filters for arg in ("--filter", f)]
    result = proveai_cli("status", *args)
    assert result.returncode == 0, result.stderr
    if expected:
        assert [r[0] for r in rows(result.stdout)] == [store[name] for name in expected]
    else:
        assert result.stdout == f"no traces match {' '.join(filters)} in proveai/traces\n"


def test_status_limit_and_manual_outcomes(proveai_cli, store, workdir):
    record_outcome(store["plain"], label="bad", root=workdir / "proveai" / "traces")
    result = proveai_cli("status", "--limit", "2", "--filter", "outcome=bad")
    assert [r[0] for r in rows(result.stdout)] == [store["plain"], store["bad"]]
    result = proveai_cli("status", "--limit", "1")
    assert [r[0] for r in rows(result.stdout)] == [store["plain"]]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--filter", "colour=red"], "unknown filter key 'colour'; valid keys: outcome, version, agent"),
        (["--filter", "outcome"], "--filter expects key=value, got 'outcome'"),
        (["--filter", "detection=broken"], "detection must be one of flagged, suspect, clean"),
        (["--filter", "since=yesterday"], "since must look like 30m, 1h, 2d or 1w"),
        (["--filter", "since=0h"], "since must look like"),
        (["--filter", "outcome=good", "--filter", "outcome=bad"], "--filter outcome given twice"),
        (["--limit", "0"], "--limit must be a positive whole number"),
        (["--limit", "ten"], "--limit must be a positive whole number"),
        (["--traces", "nowhere"], "no trace store at nowhere"),
    ],
)
def test_status_bad_input_is_exit_2(proveai_cli, store, args, fragment):
    result = proveai_cli("status", *args)
    assert_clean_error(result, 2, fragment)
    assert result.stdout == ""


def test_status_on_an_empty_store(proveai_cli, workdir):
    result = proveai_cli("status")
    assert result.returncode == 0 and result.stdout == "no traces yet in proveai/traces\n"
    assert not (workdir / "proveai").exists()  # reading creates nothing


def test_status_honours_the_traces_option_and_env(proveai_cli, store, workdir):
    moved = workdir / "elsewhere"
    (workdir / "proveai" / "traces").rename(moved)
    assert rows(proveai_cli("status", "--traces", str(moved)).stdout)[0][0] == store["plain"]
    result = proveai_cli("status", env={"PROVEAI_TRACES_DIR": str(moved)})
    assert len(rows(result.stdout)) == 4


def test_list_legacy_view(proveai_cli, store):
    result = proveai_cli("list", "--no-color")
    assert result.returncode == 0 and "\x1b" not in result.stdout
    header = result.stdout.splitlines()[0]
    assert columns(header) == ["Trace ID", "Version", "Agents", "Outcome", "Timestamp"]
    assert [r[0] for r in rows(result.stdout)] == [store["plain"], store["bad"], store["good"], store["old"]]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", rows(result.stdout)[1][-1])
    good = proveai_cli("list", "--outcome", "good", "--version", "v3")
    assert [r[0] for r in rows(good.stdout)] == [store["good"]]
    assert_clean_error(proveai_cli("list", "--outcome", "great"), 2, "outcome must be one of good, bad, skip")


def test_retired_verbs_exit_2_with_a_redirect(proveai_cli):
    result = proveai_cli("analyze", "--traces", "x")
    assert_clean_error(result, 2, "proveai analyze was retired", "written automatically at capture time")
    assert "next: proveai status --filter detection=flagged" in result.stderr
    result = proveai_cli("validate-fix")
    assert_clean_error(result, 2, "proveai validate-fix was retired")
    assert "next: proveai run --hold-at <span_id> --override AGENT=PATH" in result.stderr


def run_in_terminal(args: list[str], cwd: Path, home: Path) -> str:
    """Run the console script with a pseudo-terminal as stdout; return what it drew."""
    env = isolated_env(home, {"TERM": "xterm-256color"})
    code, drawn, errors = run_on_terminal("proveai", args, cwd, env, timeout=60)
    assert code == 0, errors
    return drawn


def test_terminal_output_is_coloured_unless_no_color(store, workdir, home):
    coloured = run_in_terminal(["status"], workdir, home)
    assert "\x1b[" in coloured and "Detection" in coloured and store["bad"] in coloured
    plain = run_in_terminal(["status", "--no-color"], workdir, home)
    assert "Detection" in plain and store["bad"] in plain
    assert "\x1b" not in plain  # no ANSI at all


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


def test_help_lists_every_verb_and_loads_no_heavy_library(proveai_cli, workdir):
    import sys

    result = proveai_cli("--help")
    assert result.returncode == 0 and result.stderr == ""
    for verb in ("snapshot", "status", "list", "analyze", "baseline", "experiment", "run", "calibrate", "ci",
                 "validate-fix"):
        assert f"\n    {verb} " in result.stdout or f"\n    {verb}\n" in result.stdout, verb
    loaded = subprocess.run([sys.executable, "-c", HEAVY_IMPORTS], capture_output=True, text=True, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.splitlines()[-1] == "[]"


@monitor("[bold]agent", version="[/oops]")
def markup_named(text: str) -> str:
    return text


def test_markup_like_values_and_an_80_column_terminal(store, workdir, home):
    with trace("t", exporters=[FileExporter(workdir / "proveai" / "traces")]):
        markup_named("z")
    env = isolated_env(home, {"TERM": "xterm-256color", "COLUMNS": "80"})
    for verb in (["status"], ["list"], ["list", "--no-color"]):
        code, drawn, errors = run_on_terminal("proveai", verb, workdir, env, timeout=60)
        assert code == 0 and "Traceback" not in errors, errors
        plain = re.sub(r"\x1b\[[0-9;]*m", "", drawn)
        assert "[/oops]" in plain or "[bold]agent" in plain, plain
        assert max(len(line) for line in plain.splitlines()) <= 80
        assert store["bad"][:12] in plain
    code, drawn, _ = run_on_terminal("proveai", ["list", "--no-color"], workdir, env, timeout=60)
    plain = drawn
    # every column keeps a readable value at 80 columns: the outcome reads in full
    assert "good" in plain and "bad" in plain and "Version" in plain and "Outcome" in plain
