"""The attribution as text: `diff`'s "where" blocks and `inspect --pair`'s side-by-side view.

Under each row of diff's table that moved, a short block (`under_rows`), starting under the
outcome column:

    ticket refund  trade    malformed    0.036 (36/1000) ...  rose
                            where: draft 36/36 flipped pairs vs 0/264 unflipped (changed: code, prompt)
                                   draft json_valid 0.027 -> 0.147 over 300 pairs, q 1.5e-11

and after the table one legend line saying what the counts are (`legend_lines`), or, when no
row can be attributed (unpaired runs, say), the one line saying why. `where_lines` is the whole
block in one piece, each row's block under its label (a terminal's wide table, which cannot
hold a line across its columns, is followed by it). A comparison of runs without agent spans,
or in which nothing moved, prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: drawing needs no NumPy, and `diff --help` imports this module
    from poisson_prove.comparison.attribution import AgentCall, Attribution, CheckComparison, RowAttribution
    from poisson_prove.comparison.twins import PairLine, PairView

HEADER = (
    "where: the first agent whose output differs between twins, in flipped pairs vs unflipped; "
    "agent checks compared paired"
)
LEGEND = (
    "where (under each row that moved): the first agent whose output differs between twins, in "
    "flipped pairs vs unflipped; agent checks compared paired"
)
LEAD = "where: "
SHOWN_AGENTS = 3  # agents listed per row beside the named one


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _counts(row: RowAttribution) -> str:
    flipped = f"{row.flipped_read:,}" + (
        "" if row.flipped_read == row.flipped_pairs else f" read of {row.flipped_pairs:,}"
    )
    unflipped = f"{row.unflipped_read:,}" + (
        "" if row.unflipped_read == row.unflipped_pairs else f" read of {row.unflipped_pairs:,}"
    )
    return f"{flipped} flipped pairs vs {unflipped} unflipped"


def _agent(agent: str, row: RowAttribution) -> str:
    count = next(a for a in row.agents if a.agent == agent)
    changed = f" (changed: {', '.join(count.changed)})" if count.changed else ""
    return (
        f"{agent} {count.flipped}/{row.flipped_read:,} flipped pairs vs "
        f"{count.unflipped}/{row.unflipped_read:,} unflipped{changed}"
    )


def check_text(check: CheckComparison) -> str:
    test = "" if check.test == "mcnemar" else ", sign-flip over cases"
    return (
        f"{check.agent} {check.check} {check.before:.3f} -> {check.after:.3f} over {check.pairs:,} pairs"
        f"{test}, q {_p(check.q_value)}"
    )


def row_lines(row: RowAttribution, level: float, head: str | None = None) -> list[str]:
    """One moved row's block: who is named (or why nobody), then its agent checks that moved
    (`head` starts the first line: the row's label, outcome and verdict unless given)."""
    head = f"{row.label} {row.outcome} {row.verdict}: " if head is None else head
    if row.named is not None:
        others = [a.agent for a in row.agents if a.agent != row.named and a.flipped][:SHOWN_AGENTS]
        tail = "".join(f"; {_agent(a, row)}" for a in others)
        sampled = f" ({_counts(row)})" if row.sampled else ""
        lines = [head + _agent(row.named, row) + tail + sampled]
    else:
        lines = [head + f"no agent is named ({_counts(row)}): {row.reason}"]
    moved = [c for c in row.checks if c.q_value is not None and c.q_value <= level]
    indent = " " * len(head) if head == LEAD else "  "
    lines += [f"{indent}{check_text(c)}" for c in moved]
    return lines


def row_where(row: RowAttribution, level: float) -> list[str]:
    """The block under one moved row: `where: ...`, its checks that moved aligned below."""
    return row_lines(row, level, LEAD)


def _family(attribution: Attribution) -> str:
    family = attribution.check_tests
    return f" (Benjamini-Hochberg over their own {family} tests)" if family else ""


def legend_lines(attribution: Attribution) -> list[str]:
    """The line after a table whose moved rows have their blocks under them: what the counts
    are, or why no row is attributed; nothing when the report says nothing."""
    if not attribution.said:
        return []
    if not attribution.available:
        return [f"where: no agent is named: {attribution.reason}"]
    return [LEGEND + _family(attribution)]


def under_rows(
    lines: Sequence[str], first: int, keys: Sequence[tuple[str, str]], attribution: Attribution, level: float
) -> tuple[list[str], list[str]]:
    """(a plain table's lines with each moved row's block under it, the blocks of attributed
    rows the table does not show). `lines[first + i]` is the table's row i, whose condition key
    and outcome are `keys[i]`; the blocks start under the header's `outcome` column."""
    rows = {(row.key, row.outcome): row for row in attribution.rows} if attribution.available else {}
    column = lines[first - 1].find("outcome") if first else -1
    indent = " " * (column if column >= 0 else 2)
    out = list(lines[:first])
    for i, line in enumerate(lines[first:]):
        out.append(line)
        row = rows.pop(keys[i], None) if i < len(keys) else None
        if row is not None:
            out += [indent + text for text in row_where(row, level)]
    left = [f"  {text}" for row in rows.values() for text in row_lines(row, level)]
    return out, left


def where_lines(attribution: Attribution, level: float) -> list[str]:
    """The whole block, or nothing (see the module docstring)."""
    if not attribution.said:
        return []
    if not attribution.available:
        return [f"where: no agent is named: {attribution.reason}"]
    lines = [HEADER + _family(attribution)]
    for row in attribution.rows:
        lines += [f"  {line}" for line in row_lines(row, level)]
    return lines


def where_text(attribution: Attribution, level: float) -> str:
    """The block as text to follow the report, with the blank line before it; '' for none."""
    lines = where_lines(attribution, level)
    return "\n" + "\n".join(lines) + "\n" if lines else ""


def pair_lines(view: PairView, before: str, after: str) -> list[str]:
    """Twins side by side: one line per agent call, `=` where the two agree, `≠` where they
    differ, the first divergence marked `<- first divergence`."""
    lines = [
        f"pair {view.condition}/{view.replicate} (seed {view.seed}): "
        f"{before} {view.before_outcome or 'no outcome'} · {after} {view.after_outcome or 'no outcome'}",
    ]
    rows = [_line_cells(line) for line in view.lines]
    width = max([len(before), *(len(b) for b, _, _ in rows)], default=len(before))
    lines.append(f"  {before:<{width}}    {after}")
    for (b, a, mark), line in zip(rows, view.lines, strict=True):
        tail = "   <- first divergence" if line.first else ""
        lines.append(f"  {b:<{width}}  {mark} {a}{tail}")
    if view.first_divergence is None:
        lines.append("every agent call gave the same output in both twins")
    return lines


def _line_cells(line: PairLine) -> tuple[str, str, str]:
    indent = "  " * line.depth
    mark = "=" if line.same else "≠"
    return _side(line, line.before, indent), _side(line, line.after, indent), mark


def _side(line: PairLine, call: AgentCall | None, indent: str) -> str:
    if call is None:
        return f"{indent}(no call)"
    short = (call.output_hash or "").removeprefix("sha256:")[:10] or "-"
    labels = "".join(f" {name}={label}" for name, label in call.checks.items())
    error = " error" if call.status == "error" else ""
    return f"{indent}{line.agent} out {short}{error}{labels}"


def pair_text(view: PairView, before: str, after: str) -> str:
    return "\n".join(pair_lines(view, before, after)) + "\n"
