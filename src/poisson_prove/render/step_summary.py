"""`check` on the GitHub Actions run page: the step summary and one annotation per condition
that got worse.

The summary is Markdown (through prove_common.step_summary, the writer `proveai snapshot
verify` uses too): a heading with the gate's verdict and exit code, the headline and method
lines, the gate's message and `next:` line, then the very table `check` prints (for a
benchmark, its pooled table), at most MAX_ROWS rows of it. The annotations are `::warning`
workflow commands, one per condition (pooled group) whose verdict is worse or trade, naming
the failure outcomes that rose with both rates and the q-value; `file=` is the after run's
spec when it lies in the working folder (the checkout), so GitHub can pin it there.

Returns text; never prints.
"""

from __future__ import annotations

from pathlib import Path

from poisson_prove.comparison.gate import GateResult
from poisson_prove.comparison.result import METHOD_NAMES, Comparison, OutcomeResult
from poisson_prove.render.text import condition_table, headline_line, method_line, rate_text, source_line
from prove_common.step_summary import annotation, md_cell, md_table

MAX_ROWS = 200  # table rows in the summary (GitHub takes at most 1 MiB of it per step)
GATE_WORDS = {"worse": "worse", "inconclusive": "inconclusive", "pass": "pass"}


def check_markdown(comparison: Comparison, gated: GateResult | None, exit_code: int) -> str:
    """The step summary of one `check`."""
    status = gated.status if gated is not None else ("worse" if comparison.any_worse else "pass")
    title = f"## poisson-prove check: {GATE_WORDS.get(status, status)} (exit {exit_code})"
    lines = [title, ""]
    lines += [
        f"**{md_cell(comparison.before.name)}** → **{md_cell(comparison.after.name)}**",
        "",
        md_cell(headline_line(comparison)),
        "",
        md_cell(method_line(comparison)),
        "",
    ]
    source = source_line(comparison)
    if source:
        lines += [md_cell(source), ""]
    if gated is not None:
        message, next_line = gated.message(), gated.next_line()
        if message:
            if gated.allow_inconclusive:
                message += " (allowed by --allow-inconclusive)"
            lines += [f"> **{md_cell(message)}**", ""]
        if next_line:
            lines += [f"> {md_cell(next_line)}", ""]
    table = condition_table(comparison)
    if table.title:
        lines += [md_cell(table.title), ""]
    rows = table.rows[:MAX_ROWS]
    lines += md_table(table.headers, rows)
    if len(table.rows) > len(rows):
        more = len(table.rows) - len(rows)
        lines += ["", f"… and {more:,} more rows (`poisson-prove check --json` has every row)"]
    for warning in comparison.warnings:
        lines += ["", f"> warning: {md_cell(warning)}"]
    lines.append("")
    return "\n".join(lines) + "\n"


def _in_checkout(spec: object, workspace: Path) -> str | None:
    """The spec's path relative to the checkout, or None when it is elsewhere (or unknown)."""
    if not isinstance(spec, str) or not spec:
        return None
    try:
        return Path(spec).resolve().relative_to(workspace.resolve()).as_posix()
    except (ValueError, OSError):
        return None


def _flag_q(row: OutcomeResult) -> str:
    """` (q 4.5e-13)`: the q-value that flagged the row; under log-rank, when only the rate
    test beside it rose, that test's (` (McNemar q 2e-10)`)."""
    rate = row.rate_test
    if rate is not None and rate.verdict == row.verdict and row.logrank_verdict != row.verdict:
        return f" ({METHOD_NAMES[rate.method]} q {rate.q_value:.2g})"
    return f" (q {row.q_value:.2g})" if row.q_value is not None else ""


def worse_annotations(
    comparison: Comparison, *, spec: object = None, workspace: Path | None = None
) -> list[str]:
    """One `::warning` line per condition (pooled group) whose verdict is worse or trade."""
    file = _in_checkout(spec, workspace or Path.cwd())
    lines = []
    for condition in comparison.conditions:
        if condition.verdict not in ("worse", "trade"):
            continue
        rose = [row for row in condition.outcomes if row.outcome in condition.rose]
        parts = [
            f"{row.outcome} rose from {rate_text(row.before)} to {rate_text(row.after)}{_flag_q(row)}"
            for row in rose
        ]
        if condition.verdict == "trade":
            parts.append(f"while {' and '.join(condition.fell)} fell")
        message = (
            f"{'; '.join(parts)}: {comparison.before.name} -> {comparison.after.name} "
            f"({comparison.method_phrase})"
        )
        title = f"poisson-prove check: {condition.label} {condition.verdict}"
        lines.append(annotation("warning", message, title=title, file=file))
    return lines
