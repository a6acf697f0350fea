"""Trace listings for status and list: a rich table on a terminal, aligned plain columns on a pipe
(both drawn by prove_common.tables)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path

from prove_common.cliapp import add_plain_option
from prove_common.console import is_pretty, wants_color
from prove_common.tables import Column, Table, plain_lines, rich_table, terminal_console
from proveai.errors import ProveAIError
from proveai.store import default_traces_dir

OUTCOME_STYLE = {"good": "green", "bad": "red", "skip": "yellow"}
DETECTION_STYLE = {"clean": "green", "flagged": "red", "suspect": "yellow"}
DASH = "—"


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--traces", metavar="PATH", default=None,
        help="the trace store folder (default: $PROVEAI_TRACES_DIR or ./proveai/traces)",
    )
    add_plain_option(parser, False)
    add_no_color_option(parser)


def add_no_color_option(parser: argparse.ArgumentParser) -> None:
    """--no-color: the table still drawn on a terminal, without colour or ANSI styles (--plain,
    a separate switch, prints what a pipe gets)."""
    parser.add_argument(
        "--no-color", dest="no_color", action="store_true",
        help="on a terminal, draw the table without colour (CI logs)",
    )


def store_of(args: argparse.Namespace) -> Path:
    """The store to read; a --traces folder that does not exist is an input error."""
    if args.traces is not None:
        path = Path(args.traces)
        if not path.is_dir():
            raise ProveAIError(
                f"no trace store at {path}" + (" (it is a file)" if path.exists() else ""),
                suggestions=["point --traces at the folder FileExporter writes (default ./proveai/traces)"],
            )
        return path
    return default_traces_dir()


def limit_value(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--limit must be a positive whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--limit must be a positive whole number, not {text!r}")
    return value


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


def print_warnings(warnings: Sequence[str]) -> None:
    for message in warnings:
        sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


def render(
    args: argparse.Namespace, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]],
    styles: Sequence[dict[str, str] | None],
) -> None:
    """Print the table: rich (coloured unless --plain) on a terminal, plain columns otherwise.

    Drawn by prove_common.tables, whose cells are never read as Rich markup: a name or
    value like "[/oops]" prints as written.
    """
    columns = {
        i: Column(no_wrap=header in ("Trace ID", "Age", "Timestamp"), min_width=len(header))
        for i, header in enumerate(headers)
    }
    if not is_pretty(args):  # aligned columns, full trace ids, no title
        table = Table(None, tuple(headers), tuple(tuple(row) for row in rows), columns=columns)
        sys.stdout.write("\n".join(plain_lines(table)) + "\n")
        return
    color = wants_color(args)
    console = terminal_console(color=color)
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
