"""A comparison drawn on a terminal (Rich): the plain report's lines, its tables in colour.

`print_rich(comparison, notes, console)` prints the lines render.text builds for a pipe, in
the same order, with the per-condition table drawn with rate bars on a terminal of at least
WIDE_TERMINAL columns and as one block per condition on a narrower one (runs with a case axis:
the pooled and per-case tables). With an attribution (`diff`), each row that moved has its
"where" block under it in the narrow blocks, and the block follows the wide table (a table cell
cannot span its columns); render.attribution draws the block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from poisson_prove.render.attribution import legend_lines, row_where, where_lines
from poisson_prove.render.text import (
    VERDICT_STYLES,
    case_table,
    complete_coverage_line,
    condition_table,
    coverage_is_complete,
    coverage_table,
    p_text,
    pooled_table,
    rate_q,
    rate_q_header,
    rate_text,
    result_text,
    rows_of,
    summary_lines,
    tail_lines,
)
from prove_common.tables import Column, Table, rich_table

if TYPE_CHECKING:
    from poisson_prove.comparison.attribution import Attribution
    from poisson_prove.comparison.result import Comparison


def _bar(share: float | None, width: int = 10) -> str:
    if share is None:
        return " " * width
    filled = round(share * width * 2) / 2
    return ("█" * int(filled) + ("▌" if filled % 1 else "")).ljust(width)


def _terminal_condition_table(comparison: Comparison) -> Any:
    """The per-condition table for a terminal: narrower cells on two lines, colour, rate bars."""
    from rich.text import Text  # rich: ~40 ms, only on a terminal

    paired = comparison.method == "mcnemar"
    beside = comparison.rate_method is not None
    headers = ["condition", "outcome", "before", "after", *(["b", "c"] if paired else []), "p", "q"]
    headers += [rate_q_header(comparison)] if beside else []
    headers += ["result"]
    rows: list[tuple[str, ...]] = []
    styles: list[tuple[str | None, ...]] = []
    bars: list[Any] = []
    section_ends: set[int] = set()
    for condition in comparison.conditions:
        verdict_style = VERDICT_STYLES.get(condition.verdict, "")
        for i, row in enumerate(rows_of(condition)):
            style = VERDICT_STYLES.get(row.verdict, "")
            label = f"{condition.label}\n{condition.verdict}" if i == 0 else ""
            before, after = rate_text(row.before, terminal=True), rate_text(row.after, terminal=True)
            cells = [label, row.outcome, before, after]
            if paired:
                cells += [str(row.b), str(row.c)]
            cells += [p_text(row.p), p_text(row.q_value)]
            cells += [rate_q(row)] if beside else []
            cells += [result_text(row, terminal=True)]
            rows.append(tuple(cells))
            styles.append((verdict_style if i == 0 else None, *[None] * (len(cells) - 2), style))
            bars.append(
                Text(_bar(row.before.share, 5), style="grey50")
                + Text("|")
                + Text(_bar(row.after.share, 5), style=style)
            )
        section_ends.add(len(rows) - 1)
    result_column = len(headers) - 1
    table = Table(
        condition_table(comparison).title,
        tuple(headers),
        tuple(rows),
        right=frozenset(range(2, result_column)),
        styles=tuple(styles),
        columns={
            0: Column(no_wrap=False, min_width=18),
            result_column: Column(no_wrap=False, min_width=9),
        },
        section_ends=frozenset(section_ends),
    )
    # the rate bars: a column of ready renderables, never wrapped
    drawn = rich_table(table, extra=("rates", bars))
    drawn.columns[-1].min_width = 11
    return drawn


WIDE_TERMINAL = 118  # narrower terminals get one block per condition instead of the table


def _print_condition_blocks(comparison: Comparison, console: Any, attribution: Attribution | None) -> None:
    """Narrow terminals: per condition a heading line, then one line per event (a moved one
    with its where block under it)."""
    from rich.text import Text  # rich: ~40 ms, only on a terminal

    console.print(Text(condition_table(comparison).title or "", style="italic"))
    paired = comparison.method == "mcnemar"
    width = max(len(row.outcome) for condition in comparison.conditions for row in rows_of(condition))
    moved = {(r.key, r.outcome): r for r in attribution.rows} if attribution and attribution.available else {}
    for condition in comparison.conditions:
        heading = Text(condition.label + "  ", style="bold")
        heading.append(condition.verdict, style=VERDICT_STYLES.get(condition.verdict, ""))
        console.print(heading)
        for row in rows_of(condition):
            style = VERDICT_STYLES.get(row.verdict, "")
            line = Text(f"  {row.outcome.ljust(width)}  ")
            line.append(_bar(row.before.share, 5), style="grey50")
            line.append("|")
            line.append(_bar(row.after.share, 5), style=style)
            line.append(f"  {rate_text(row.before)} -> {rate_text(row.after)}")
            if paired:
                line.append(f"  b {row.b} c {row.c}")
            line.append(f"  p {p_text(row.p)} q {p_text(row.q_value)}  ")
            if row.rate_test is not None:
                line.append(f"{rate_q_header(comparison)} {rate_q(row)}  ")
            line.append(result_text(row), style=style)
            console.print(line)
            attributed = moved.get((condition.key, row.outcome))
            for text in row_where(attributed, comparison.q) if attributed is not None else ():
                console.print(Text(f"    {text}"))
    console.print()


def print_rich(
    comparison: Comparison, notes: Sequence[str], console: Any, *, cases: str = "moved",
    attribution: Attribution | None = None,
) -> None:
    """The report on a terminal: the same lines, tables drawn with colour and rate bars (runs
    with a case axis: the pooled and per-case tables drawn as tables, in colour); with
    `attribution`, its where blocks (see the module docstring)."""
    from rich.text import Text  # rich: ~40 ms, only on a terminal

    lines = summary_lines(comparison)
    word = comparison.headline.word
    head = Text(word, style=VERDICT_STYLES.get(word, ""))
    head.append(lines[0][len(word):])
    console.print(head)
    for line in lines[1:]:
        style = "yellow" if line.startswith("trade ") else None
        console.print(Text(line, style=style or ""))
    console.print()
    after: list[str] = []  # the where block, when the table drawn cannot hold it under its rows
    if comparison.case_axis is not None:
        console.print(rich_table(pooled_table(comparison)))
        after = where_lines(attribution, comparison.q) if attribution is not None else []
        console.print(rich_table(case_table(comparison, cases)))
    elif console.width >= WIDE_TERMINAL:
        console.print(_terminal_condition_table(comparison))
        after = where_lines(attribution, comparison.q) if attribution is not None else []
    else:
        _print_condition_blocks(comparison, console, attribution)
        after = legend_lines(attribution) if attribution is not None else []
    for line in after:
        console.print(Text(line))
    if coverage_is_complete(comparison):
        console.print(complete_coverage_line(comparison))
    else:
        console.print(rich_table(coverage_table(comparison, cases)))
    for line in tail_lines(comparison, notes):
        console.print(Text(line, style="yellow" if line.startswith("warning") else "cyan"))
