"""Trace listings for `proveai status` and `proveai list`: a rich table on a terminal, aligned
plain columns on a pipe (both drawn by prove_common.tables), the age and time cells, and the
store's warnings."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Sequence
from typing import IO

from prove_common.tables import Column, Table, plain_lines, rich_table, terminal_console

OUTCOME_STYLE = {"good": "green", "bad": "red", "skip": "yellow"}
DETECTION_STYLE = {"clean": "green", "flagged": "red", "suspect": "yellow"}
DASH = "—"


def age(stamp: dt.datetime | None, now: dt.datetime) -> str:
    if stamp is None:
        return DASH
    seconds = int((now - stamp).total_seconds())
    if seconds < 0:
        return "in the future"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def timestamp_text(stamp: dt.datetime | None) -> str:
    return stamp.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if stamp else DASH


def print_warnings(warnings: Sequence[str], err: IO[str] | None = None) -> None:
    """One `warning:` line per warning, on `err` (stderr by default)."""
    err = err or sys.stderr
    for message in warnings:
        err.write(f"warning: {message}\n")
    err.flush()


def draw_traces(
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    styles: Sequence[dict[str, str] | None],
    *,
    pretty: bool,
    color: bool,
    out: IO[str] | None = None,
) -> None:
    """Write the table to `out` (stdout by default): pretty, a rich table (coloured when
    `color`; `styles` map each column's cell text to its style); else aligned plain columns,
    full trace ids, no title.

    Drawn by prove_common.tables, whose cells are never read as Rich markup: a name or
    value like "[/oops]" prints as written.
    """
    columns = {
        i: Column(no_wrap=header in ("Trace ID", "Age", "Timestamp"), min_width=len(header))
        for i, header in enumerate(headers)
    }
    if not pretty:
        table = Table(None, tuple(headers), tuple(tuple(row) for row in rows), columns=columns)
        (out or sys.stdout).write("\n".join(plain_lines(table)) + "\n")
        return
    console = terminal_console(out, color=color)
    # on a narrow terminal the 32-character trace id would squeeze every other column to "…"
    narrow = console.width < 110
    shown_rows, row_styles = [], []
    for row in rows:
        shown_rows.append(tuple(
            cell[:12] + "…" if narrow and header == "Trace ID" and len(cell) > 13 else cell
            for header, cell in zip(headers, row, strict=True)
        ))
        row_styles.append(tuple(
            (style or {}).get(cell) if color else None for cell, style in zip(row, styles, strict=True)
        ))
    table = Table(
        title, tuple(headers), tuple(shown_rows), styles=tuple(row_styles), columns=columns,
        box="HEAVY_HEAD", title_justify="center", pad_edge=True,
    )
    console.print(rich_table(table))
