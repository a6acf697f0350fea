"""Drawing trace listings: a rich table on a terminal, aligned plain columns on a pipe."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from poisson_prove.shared.console import is_pretty
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
    parser.add_argument("--no-color", action="store_true", help="no colour, no ANSI (for CI logs)")


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
    """Print the table: rich (coloured unless --no-color) on a terminal, plain columns otherwise."""
    pretty = is_pretty(args)
    if not pretty:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    no_color = bool(args.no_color or os.environ.get("NO_COLOR"))
    # --no-color strips every ANSI sequence (bold and italic too), not just the colours
    console = Console(color_system=None if no_color else "auto", highlight=False)
    table = Table(title=Text(title))
    # on a narrow terminal the 32-character trace id would squeeze every other column to "…"
    narrow = console.width < 110
    for header in headers:
        table.add_column(header, no_wrap=header in ("Trace ID", "Age", "Timestamp"), min_width=len(header))
    for row in rows:
        cells: list[Any] = []
        for header, cell, style in zip(headers, row, styles, strict=True):
            colour = (style or {}).get(cell)
            shown = cell[:12] + "…" if narrow and header == "Trace ID" and len(cell) > 13 else cell
            # Text, never a markup string: a name or value like "[/oops]" prints as is
            cells.append(Text(shown, style=colour if colour and not no_color else ""))
        table.add_row(*cells)
    console.print(table)
