"""A comparison as people read it: plain text on a pipe, rich tables with colour on a terminal.

Line order (both drawings): the headline, `method`, `before`, `after`, one `trade` line per
trade, the per-condition table, the coverage table, then `note:` and `warning:` lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from poisson_prove.comparison.result import METHOD_NAMES, Comparison, ConditionResult, OutcomeResult, Rate
from prove_common.tables import Column, Table, plain_lines, rich_table

VERDICT_STYLES = {
    "rose": "bold red",
    "fell": "bold green",
    "worse": "bold red",
    "safer": "bold green",
    "trade": "bold yellow",
    "no change": "dim",
    "not tested": "dim",
}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def _mde(value: float | None, sign: str) -> str:
    if value is None:
        return "no rise" if sign == "+" else "no fall"
    # Rounded up to 3 decimals: a printed "smallest change" is never smaller than the truth.
    return f"{sign}{math.ceil(round(value * 1000, 6)) / 1000:.3f}"


def rate_text(rate: Rate, *, terminal: bool = False) -> str:
    """`0.314 (61/194) [0.254, 0.381]`; starred when censored before the horizon.

    On a terminal the counts are left out and the interval goes on a second line.
    """
    if rate.share is None:
        return "-" if terminal else f"- (0/{rate.n})"
    star = "*" if rate.starred else ""
    interval = f"[{_share(rate.lo)}, {_share(rate.hi)}]"
    if terminal:
        return f"{_share(rate.share)}{star}\n{interval}"
    return f"{_share(rate.share)}{star} ({rate.k}/{rate.n}) {interval}"


def result_text(row: OutcomeResult, *, terminal: bool = False) -> str:
    """The verdict; a "no change" says the smallest rise and fall it could have shown."""
    if row.verdict != "no change":
        return row.verdict
    joiner = "\n" if terminal else ", could have shown "
    return f"no change{joiner}{_mde(row.mde_rise, '+')} / {_mde(row.mde_fall, '-')}"


def headline_line(comparison: Comparison) -> str:
    counts = " · ".join(f"{c.outcome}: {c.safer} safer, {c.worse} worse" for c in comparison.headline.counts)
    conditions = len(comparison.conditions)
    unit = f" {comparison.t_unit}" if comparison.t_unit else ""
    return (
        f"{comparison.headline.word} {counts} ({comparison.method_phrase}); "
        f"{conditions} condition{'s' if conditions != 1 else ''} by {_number(comparison.horizon)}{unit}, "
        f"q {comparison.q:g}"
    )


def method_line(comparison: Comparison) -> str:
    name = METHOD_NAMES[comparison.method]
    if not comparison.method_is_default:
        reason = "chosen with --method"
    elif comparison.paired:
        reason = "the default for runs paired at sweep time"
    else:
        reason = "the default for runs not paired at sweep time"
    if comparison.sequential is not None:
        looks = max((len(v) for v in comparison.sequential["looks"].values()), default=0)  # most of any
        run = comparison.sequential["run"]
        name += f', sequential p-values from the {looks} looks run "{run}" recorded with --stop-when-settled'
    return f"method {comparison.method_phrase} ({name}), {reason}"


def trade_line(condition: ConditionResult) -> str:
    fell, rose = " and ".join(condition.fell), " and ".join(condition.rose)
    return f"trade {condition.label}: {fell} fell, {rose} rose"


def summary_lines(comparison: Comparison) -> list[str]:
    lines = [
        headline_line(comparison),
        method_line(comparison),
        f"before {comparison.before.name}",
        f"after {comparison.after.name}",
    ]
    lines += [trade_line(c) for c in comparison.conditions if c.verdict == "trade"]
    return lines


def condition_table(comparison: Comparison) -> Table:
    paired = comparison.method == "mcnemar"
    headers = ["condition", "verdict", "outcome", "before", "after"]
    headers += ["b", "c"] if paired else []
    headers += ["chi2"] if comparison.method == "logrank_bh" else []
    headers += ["p", "q", "result"]
    rows: list[tuple[str, ...]] = []
    styles: list[tuple[str | None, ...]] = []
    for condition in comparison.conditions:
        for i, row in enumerate(condition.outcomes):
            first = i == 0
            cells = [condition.label if first else "", condition.verdict if first else "", row.outcome]
            cells += [rate_text(row.before), rate_text(row.after)]
            if paired:
                cells += [str(row.b) if row.b is not None else "-", str(row.c) if row.c is not None else "-"]
            if comparison.method == "logrank_bh":
                cells += ["-" if row.statistic is None else f"{row.statistic:.2f}"]
            cells += [_p(row.p), _p(row.q_value), result_text(row)]
            rows.append(tuple(cells))
            style: list[str | None] = [None] * len(cells)
            style[1] = VERDICT_STYLES.get(condition.verdict) if first else None
            style[-1] = VERDICT_STYLES.get(row.verdict)
            styles.append(tuple(style))
    right = {3, 4} | set(range(5, len(headers) - 1))
    unit = f" {comparison.t_unit}" if comparison.t_unit else ""
    title = (
        f"rates by {_number(comparison.horizon)}{unit}, 95% Wilson intervals "
        f"(* censored before it); q: Benjamini-Hochberg over {comparison.tests} tests"
    )
    return Table(title, tuple(headers), tuple(rows), frozenset(right), tuple(styles))


def _errors(errors: Sequence[Any]) -> str:
    return ", ".join(f"{e.kind} {e.count:,}" for e in errors) or "-"


def coverage_table(comparison: Comparison) -> Table:
    headers = ("condition", "before", "after", "errors before", "errors after", "q")
    rows = []
    styles = []
    for row in comparison.coverage:
        rows.append(
            (
                row.label,
                f"{row.before_without:,}/{row.before_rows:,}",
                f"{row.after_without:,}/{row.after_rows:,}",
                _errors(row.before_errors),
                _errors(row.after_errors),
                _p(row.q_value),
            )
        )
        styles.append((None, None, None, None, None, "bold red" if row.differs else None))
    return Table(
        "coverage: episodes without an outcome (left out of every rate)",
        headers,
        tuple(rows),
        frozenset({1, 2, 5}),
        tuple(styles),
    )


def coverage_is_complete(comparison: Comparison) -> bool:
    return all(not row.before_without and not row.after_without for row in comparison.coverage)


def complete_coverage_line(comparison: Comparison) -> str:
    before = sum(row.before_rows for row in comparison.coverage)
    after = sum(row.after_rows for row in comparison.coverage)
    return f"coverage: every episode has an outcome ({before:,} before, {after:,} after)"


def tail_lines(comparison: Comparison, notes: Sequence[str]) -> list[str]:
    return [f"note: {n}" for n in notes] + [f"warning: {w}" for w in comparison.warnings]


def plain_report(comparison: Comparison, notes: Sequence[str] = ()) -> str:
    """The whole report as plain text: no ANSI codes, no box characters, fixed column order."""
    lines = summary_lines(comparison)
    lines += ["", *plain_lines(condition_table(comparison))]
    if coverage_is_complete(comparison):
        lines += ["", complete_coverage_line(comparison)]
    else:
        lines += ["", *plain_lines(coverage_table(comparison))]
    tail = tail_lines(comparison, notes)
    if tail:
        lines += ["", *tail]
    return "\n".join(lines) + "\n"


def _bar(share: float | None, width: int = 10) -> str:
    if share is None:
        return " " * width
    filled = round(share * width * 2) / 2
    return ("█" * int(filled) + ("▌" if filled % 1 else "")).ljust(width)


def _terminal_condition_table(comparison: Comparison) -> Any:
    """The per-condition table for a terminal: narrower cells on two lines, colour, rate bars."""
    from rich.text import Text  # rich: ~40 ms, only on a terminal

    paired = comparison.method == "mcnemar"
    headers = ["condition", "outcome", "before", "after", *(["b", "c"] if paired else []), "p", "q", "result"]
    rows: list[tuple[str, ...]] = []
    styles: list[tuple[str | None, ...]] = []
    bars: list[Any] = []
    section_ends: set[int] = set()
    for condition in comparison.conditions:
        verdict_style = VERDICT_STYLES.get(condition.verdict, "")
        for i, row in enumerate(condition.outcomes):
            style = VERDICT_STYLES.get(row.verdict, "")
            label = f"{condition.label}\n{condition.verdict}" if i == 0 else ""
            before, after = rate_text(row.before, terminal=True), rate_text(row.after, terminal=True)
            cells = [label, row.outcome, before, after]
            if paired:
                cells += [str(row.b), str(row.c)]
            cells += [_p(row.p), _p(row.q_value), result_text(row, terminal=True)]
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


def _print_condition_blocks(comparison: Comparison, console: Any) -> None:
    """Narrow terminals: per condition a heading line, then one line per event."""
    from rich.text import Text  # rich: ~40 ms, only on a terminal

    console.print(Text(condition_table(comparison).title, style="italic"))
    paired = comparison.method == "mcnemar"
    width = max(len(name) for name in comparison.outcomes)
    for condition in comparison.conditions:
        heading = Text(condition.label + "  ", style="bold")
        heading.append(condition.verdict, style=VERDICT_STYLES.get(condition.verdict, ""))
        console.print(heading)
        for row in condition.outcomes:
            style = VERDICT_STYLES.get(row.verdict, "")
            line = Text(f"  {row.outcome.ljust(width)}  ")
            line.append(_bar(row.before.share, 5), style="grey50")
            line.append("|")
            line.append(_bar(row.after.share, 5), style=style)
            line.append(f"  {rate_text(row.before)} -> {rate_text(row.after)}")
            if paired:
                line.append(f"  b {row.b} c {row.c}")
            line.append(f"  p {_p(row.p)} q {_p(row.q_value)}  ")
            line.append(result_text(row), style=style)
            console.print(line)
    console.print()


def print_rich(comparison: Comparison, notes: Sequence[str], console: Any) -> None:
    """The report on a terminal: the same lines, tables drawn with colour and rate bars."""
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
    if console.width >= WIDE_TERMINAL:
        console.print(_terminal_condition_table(comparison))
    else:
        _print_condition_blocks(comparison, console)
    if coverage_is_complete(comparison):
        console.print(complete_coverage_line(comparison))
    else:
        console.print(rich_table(coverage_table(comparison)))
    for line in tail_lines(comparison, notes):
        console.print(Text(line, style="yellow" if line.startswith("warning") else "cyan"))
