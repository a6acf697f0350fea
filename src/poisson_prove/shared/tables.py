"""Tables drawn two ways: plain aligned text (pipes, --plain) and rich tables (terminals).

A table is data first (headers, rows of cell text, alignment, an optional style per cell);
the plain drawing has no ANSI codes and no box characters, and its column order is fixed so
that two outputs diff cleanly line by line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Table:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: frozenset[int] = frozenset()  # right-aligned column indices (numbers)
    styles: tuple[tuple[str | None, ...], ...] = field(default=())  # per row, per cell


def plain_lines(table: Table) -> list[str]:
    """The table as aligned lines: a title line, a header line, then one line per row."""
    widths = [len(h) for h in table.headers]
    for row in table.rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(width) if i in table.right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return [table.title, line(table.headers), *(line(row) for row in table.rows)]


def rich_table(table: Table, extra: tuple[str, Sequence[object]] | None = None):  # -> rich Table
    """The table drawn by rich; `extra` appends a column of ready renderables (e.g. bars)."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    drawn = RichTable(title=table.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for i, header in enumerate(table.headers):
        drawn.add_column(header, justify="right" if i in table.right else "left", no_wrap=i != 0)
    if extra is not None:
        drawn.add_column(extra[0], no_wrap=True)
    for r, row in enumerate(table.rows):
        styles = table.styles[r] if r < len(table.styles) else ()
        cells = [
            Text(cell, style=styles[i] or "") if i < len(styles) else Text(cell)
            for i, cell in enumerate(row)
        ]
        if extra is not None:
            cells.append(extra[1][r])
        drawn.add_row(*cells)
    return drawn
