"""render/traces.py: the trace listings of `proveai status` and `proveai list`. On a pipe, aligned
plain columns with full trace ids and no title; on a terminal a rich table whose trace ids are
cut on a narrow one; cells never read as Rich markup; the age and time cells; one `warning:`
line per store warning. Drawn into real text streams here, and on a real terminal through both
verbs at the end."""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest

from proveai import FileExporter, trace
from proveai.render.traces import DASH, age, draw_traces, print_warnings, timestamp_text
from tests.conftest import isolated_env, run_on_terminal
from tests.proveai.cli.status_kit import (
    markup_named,
    status_store,  # noqa: F401  (the `store` fixture)
)

NOW = dt.datetime(2026, 3, 10, 12, 0, 0, tzinfo=dt.UTC)
HEADERS = ("Trace ID", "Version", "Outcome", "Age")
LONG_ID = "0123456789abcdef" * 2
ROWS = (
    (LONG_ID, "[/oops]", "good", "5s ago"),
    ("f" * 32, "v4", "[bold]bad[/bold]", "3d ago"),
)
STYLES = (None, None, {"good": "green"}, None)


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0s ago"), (59, "59s ago"), (60, "1m ago"), (3599, "59m ago"), (3600, "1h ago"),
     (86399, "23h ago"), (86400, "1d ago"), (3 * 86400 + 7200, "3d ago"), (-1, "in the future")],
)
def test_an_age_is_its_largest_whole_unit(seconds: int, shown: str) -> None:
    assert age(NOW - dt.timedelta(seconds=seconds), NOW) == shown


def test_no_time_is_a_dash_and_a_time_reads_in_utc() -> None:
    assert age(None, NOW) == DASH == "—"
    assert timestamp_text(None) == DASH
    paris = dt.timezone(dt.timedelta(hours=1))
    assert timestamp_text(dt.datetime(2026, 3, 10, 13, 0, 5, tzinfo=paris)) == "2026-03-10 12:00:05 UTC"


def test_each_store_warning_is_one_line_on_err() -> None:
    err = io.StringIO()
    print_warnings(["manifest.json is corrupt; rebuilding", "x.json cannot be read"], err)
    assert err.getvalue() == "warning: manifest.json is corrupt; rebuilding\nwarning: x.json cannot be read\n"
    quiet = io.StringIO()
    print_warnings([], quiet)
    assert quiet.getvalue() == ""


def test_a_pipe_gets_aligned_columns_full_ids_and_no_title() -> None:
    out = io.StringIO()
    draw_traces("3 traces", HEADERS, ROWS, STYLES, pretty=False, color=True, out=out)
    assert out.getvalue().splitlines() == [
        "Trace ID                          Version  Outcome           Age",
        f"{LONG_ID}  [/oops]  good              5s ago",
        f"{'f' * 32}  v4       [bold]bad[/bold]  3d ago",
    ]


@pytest.mark.parametrize(("columns", "cut"), [("80", True), ("160", False)])
def test_a_terminal_gets_a_drawn_table_with_ids_cut_when_narrow(
    columns: str, cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    out = io.StringIO()
    draw_traces("Recent traces", HEADERS, ROWS, STYLES, pretty=True, color=True, out=out)
    lines = out.getvalue().splitlines()
    assert "Recent traces" in lines[0] and any("┃" in line for line in lines)
    assert max(len(line) for line in lines) <= int(columns)
    text = out.getvalue()
    assert "[/oops]" in text and "[bold]bad[/bold]" in text  # as written, never markup
    assert (LONG_ID in text) is not cut
    assert (f"{LONG_ID[:12]}…" in text) is cut
    assert "\x1b[" not in text  # a stream that is not a terminal gets no colour


# ---- both verbs on a real terminal ---------------------------------------------------------------


def test_markup_like_values_and_an_80_column_terminal(store, workdir, home):
    with trace("t", exporters=[FileExporter(workdir / "proveai" / "traces")]):
        markup_named("z")
    env = isolated_env(home, {"TERM": "xterm-256color", "COLUMNS": "80"})
    for verb in (["status"], ["list"], ["list", "--no-color"]):
        code, drawn, errors = run_on_terminal("proveai", verb, workdir, env, timeout=60)
        assert code == 0 and "Traceback" not in errors, errors
        plain = re.sub(r"\x1b\[[0-9;]*m", "", drawn)
        assert "[/oops]" in plain or "[bold]agent" in plain, plain
        assert max(len(line) for line in plain.splitlines()) <= 80, plain
        assert store["bad"][:12] in plain
    code, drawn, _ = run_on_terminal("proveai", ["list", "--no-color"], workdir, env, timeout=60)
    plain = drawn
    # every column keeps a readable value at 80 columns: the outcome reads in full
    assert "good" in plain and "bad" in plain and "Version" in plain and "Outcome" in plain
