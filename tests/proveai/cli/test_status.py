"""`proveai status` through the installed console script, on a pipe and on a terminal."""

from __future__ import annotations

import re

import pytest

from proveai import record_outcome
from tests.conftest import assert_clean_error
from tests.proveai.cli.status_kit import (
    columns,
    rows,
    run_in_terminal,
    status_store,  # noqa: F401  (the `store` fixture)
)


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
        (["--traces", ""], "error: argument --traces: expects a path, got ''"),
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


def test_a_traces_dir_named_by_the_env_that_is_no_folder_is_exit_2_as_the_option(proveai_cli, workdir):
    """$PROVEAI_TRACES_DIR=nowhere agrees with --traces nowhere (exit 2, naming the variable, a
    next: line); only the default store may be absent ("no traces yet"), and nothing is made."""
    for verb in ("status", "list"):
        result = proveai_cli(verb, env={"PROVEAI_TRACES_DIR": "nowhere"})
        assert_clean_error(result, 2, "no trace store at nowhere ($PROVEAI_TRACES_DIR): no such folder")
        assert "next: point $PROVEAI_TRACES_DIR at the folder FileExporter writes" in result.stderr
        assert result.stdout == ""
    named = proveai_cli("status", "--traces", "nowhere", env={"PROVEAI_TRACES_DIR": "nowhere"})
    assert_clean_error(named, 2, "error: no trace store at nowhere")
    assert "$PROVEAI_TRACES_DIR" not in named.stderr  # the option wins, and is the one named
    assert list(workdir.iterdir()) == []


def test_status_honours_the_traces_option_and_env(proveai_cli, store, workdir):
    moved = workdir / "elsewhere"
    (workdir / "proveai" / "traces").rename(moved)
    assert rows(proveai_cli("status", "--traces", str(moved)).stdout)[0][0] == store["plain"]
    result = proveai_cli("status", env={"PROVEAI_TRACES_DIR": str(moved)})
    assert len(rows(result.stdout)) == 4


def test_terminal_output_is_coloured_unless_no_color(store, workdir, home):
    coloured = run_in_terminal(["status"], workdir, home)
    assert "\x1b[" in coloured and "Detection" in coloured and store["bad"] in coloured
    plain = run_in_terminal(["status", "--no-color"], workdir, home)
    assert "Detection" in plain and store["bad"] in plain
    assert "\x1b" not in plain  # no ANSI at all


def test_plain_prints_what_a_pipe_gets_and_no_color_keeps_the_table(store, workdir, home, proveai_cli):
    plain = run_in_terminal(["status", "--plain"], workdir, home)
    piped = proveai_cli("status").stdout
    # the one meaning --plain has in both CLIs: the aligned columns a pipe gets, no drawn box
    assert plain.replace("\r\n", "\n").splitlines()[0] == piped.splitlines()[0]
    assert len(plain.splitlines()) == len(piped.splitlines()) and "┃" not in plain
    assert "Detection" in plain and store["bad"] in plain and "\x1b" not in plain
    uncoloured = run_in_terminal(["status", "--no-color"], workdir, home)
    assert "\x1b" not in uncoloured and "┃" in uncoloured  # still the drawn table
    for verb in ("status", "list", "run"):
        shown = proveai_cli(verb, "--help").stdout
        assert "--plain" in shown and "--no-color" in shown
