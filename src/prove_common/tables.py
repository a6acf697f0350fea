"""The one table drawer of both command lines: plain aligned text (pipes, --plain) or a Rich
table (terminals).

A table is data first (a title, headers, rows of cell text, alignment, an optional style per
cell, a caption); the plain drawing has no ANSI codes and no box characters, and its column
order is fixed so that two outputs diff cleanly line by line. The Rich drawing makes every
title, header and cell a `rich.text.Text`, so data is never read as console markup: an agent or
run named `[/oops]` prints as itself (a markup string would raise MarkupError or vanish).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table as RichTable

__all__ = ["Column", "Table", "clip_text", "draw_table", "plain_lines", "rich_table", "terminal_console"]


@dataclass(frozen=True)
class Column:
    """How one column is laid out beyond its header and alignment.

    `no_wrap`: the Rich drawing never wraps it (None: every column but the first);
    `overflow`: Rich's handling of a cell too wide ("fold", "ellipsis", "crop");
    `width`/`min_width`/`ratio`: Rich's column sizing; `clip`: the plain drawing folds the
    cell's whitespace and cuts it to this many characters, ending in "…" (CI logs stay readable).
    """

    no_wrap: bool | None = None
    overflow: str | None = None
    width: int | None = None
    min_width: int | None = None
    ratio: int | None = None
    clip: int | None = None


@dataclass(frozen=True)
class Table:
    title: str | None
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: frozenset[int] = frozenset()  # right-aligned column indices (numbers)
    styles: tuple[tuple[str | None, ...], ...] = field(default=())  # per row, per cell
    caption: str | None = None
    columns: Mapping[int, Column] = field(default_factory=dict)  # by column index
    section_ends: frozenset[int] = frozenset()  # Rich: a rule under these rows (groups)
    # the Rich look: a `rich.box` name, the title's place, padding at the edges, a fixed width
    box: str = "SIMPLE_HEAD"
    title_justify: str = "left"
    pad_edge: bool = False
    width: int | None = None


def clip_text(text: str, width: int) -> str:
    """`text` with its whitespace folded, cut to `width` characters ending in "…"."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _plain_cells(table: Table, cells: Sequence[str]) -> list[str]:
    shown = []
    for i, cell in enumerate(cells):
        clip = table.columns[i].clip if i in table.columns else None
        shown.append(clip_text(cell, clip) if clip is not None else cell)
    return shown


def plain_lines(table: Table) -> list[str]:
    """The table as aligned lines: the title line (when there is a title), a header line, one
    line per row, then the caption (when there is one). Two spaces between columns; no
    trailing spaces."""
    rows = [_plain_cells(table, row) for row in table.rows]
    widths = [len(h) for h in table.headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(width) if i in table.right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    head = [table.title] if table.title is not None else []
    tail = [table.caption] if table.caption is not None else []
    return [*head, line(table.headers), *(line(row) for row in rows), *tail]


def rich_table(table: Table, extra: tuple[str, Sequence[object]] | None = None) -> RichTable:
    """The table drawn by Rich; `extra` appends a column of ready renderables (e.g. bars)."""
    # rich: ~40 ms to import, only when a terminal gets a table
    from rich import box as boxes
    from rich.table import Table as RichTable  # rich: ~40 ms, only on a terminal
    from rich.text import Text  # rich: ~40 ms, only on a terminal

    drawn = RichTable(
        # Text, not str: Rich reads a str title as markup; the styles are the ones it gives a str
        title=Text(table.title, style="table.title") if table.title is not None else None,
        caption=Text(table.caption, style="table.caption") if table.caption is not None else None,
        title_justify=table.title_justify,  # type: ignore[arg-type]
        box=getattr(boxes, table.box),
        pad_edge=table.pad_edge,
        width=table.width,
    )
    for i, header in enumerate(table.headers):
        look = table.columns.get(i, Column())
        drawn.add_column(
            Text(header),
            justify="right" if i in table.right else "left",
            no_wrap=i != 0 if look.no_wrap is None else look.no_wrap,
            overflow=look.overflow or "ellipsis",  # type: ignore[arg-type]
            width=look.width,
            min_width=look.min_width,
            ratio=look.ratio,
        )
    if extra is not None:
        drawn.add_column(extra[0], no_wrap=True)
    for r, row in enumerate(table.rows):
        styles = table.styles[r] if r < len(table.styles) else ()
        cells: list[Any] = [
            Text(cell, style=(styles[i] or "") if i < len(styles) else "")
            for i, cell in enumerate(row)
        ]
        if extra is not None:
            cells.append(extra[1][r])
        drawn.add_row(*cells, end_section=r in table.section_ends)
    return drawn


def terminal_console(stream: IO[str] | None = None, *, color: bool = True, **options: Any) -> Console:
    """A Rich console for pretty output: no highlighting of numbers or words in data, and no
    colour (no ANSI styles at all) when `color` is False or NO_COLOR is set."""
    # rich: ~40 ms to import, only when a terminal gets pretty output
    from rich.console import Console

    plain_colour = not color or bool(os.environ.get("NO_COLOR"))
    return Console(
        file=stream, highlight=False, color_system=None if plain_colour else "auto", **options
    )


def draw_table(
    table: Table, stream: IO[str] | None = None, *, pretty: bool, color: bool = True
) -> None:
    """Write the table to `stream` (stdout by default): Rich when `pretty`, else plain lines."""
    if pretty:
        terminal_console(stream, color=color).print(rich_table(table))
        return
    out = stream if stream is not None else sys.stdout
    out.write("\n".join(plain_lines(table)) + "\n")
    out.flush()

