"""A comparison as people read it: plain text on a pipe (a terminal's drawing is render.terminal).

Line order (both drawings): the headline, `method`, `before`, `after`, the `source differs`
line (imports), one `trade` line per trade, the per-condition table (with `diff`'s attribution:
a "where" block under each row that moved and a legend line after the table,
render.attribution), the coverage table, then `note:` and `warning:` lines. Runs with a case
axis draw the pooled table (one row per pooled group and failure outcome, the headline family)
in place of the per-condition table, then the per-case detail table: by default only the cases
that moved (most-moved first, at most CASES_SHOWN of them), every case with `cases="all"`
(`--cases all`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from poisson_prove.comparison.result import METHOD_NAMES, Comparison, ConditionResult, OutcomeResult, Rate
from poisson_prove.render.attribution import legend_lines, under_rows
from prove_common.tables import Table, plain_lines

if TYPE_CHECKING:  # types only: the attribution is drawn without importing NumPy here
    from poisson_prove.comparison.attribution import Attribution

CASES_SHOWN = 10  # per-case rows shown by default: the cases that moved most
CASE_CHOICES = ("moved", "all")

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


def p_text(value: float | None) -> str:
    """A p- or q-value as the tables print it."""
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
    """The verdict; a "no change" says the smallest rise and fall it could have shown. Under
    log-rank a move only one of its two tests found says which (`rose (McNemar)`)."""
    if row.verdict != "no change":
        return row.verdict + _which_test(row)
    joiner = "\n" if terminal else ", could have shown "
    return f"no change{joiner}{_mde(row.mde_rise, '+')} / {_mde(row.mde_fall, '-')}"


def _which_test(row: OutcomeResult) -> str:
    """` (McNemar)`, ` (log-rank; McNemar: fell)`: which of a log-rank row's two tests made
    its verdict, when not both; nothing for the other methods."""
    rate = row.rate_test
    if rate is None or row.logrank_verdict is None:
        return ""
    name = METHOD_NAMES[rate.method]
    hazard = row.logrank_verdict
    if hazard == rate.verdict:
        return ""
    if rate.verdict == row.verdict:
        return f" ({name})" if hazard == "no change" else f" ({name}; log-rank: {hazard})"
    return " (log-rank)" if rate.verdict == "no change" else f" (log-rank; {name}: {rate.verdict})"


def rate_q(row: OutcomeResult) -> str:
    """A log-rank row's rate-test q-value as printed (`-` where it has none)."""
    return "-" if row.rate_test is None else p_text(row.rate_test.q_value)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def headline_line(comparison: Comparison) -> str:
    counts = " · ".join(f"{c.outcome}: {c.safer} safer, {c.worse} worse" for c in comparison.headline.counts)
    if comparison.case_axis is None:
        scope = _plural(len(comparison.conditions), "condition")
    else:
        groups, cases = len(comparison.conditions), len(comparison.cases)
        scope = f"{_plural(groups, 'pooled group')} of {_plural(cases, 'case')}"
    unit = f" {comparison.t_unit}" if comparison.t_unit else ""
    return (
        f"{comparison.headline.word} {counts} ({comparison.method_phrase}); "
        f"{scope} by {_number(comparison.horizon)}{unit}, q {comparison.q:g}"
    )


def method_line(comparison: Comparison) -> str:
    name = METHOD_NAMES[comparison.method]
    rate = comparison.rate_method
    if comparison.case_axis is not None:
        beside = "" if rate is None else f" and {METHOD_NAMES[rate]} on the rates"
        name = f"cases from the {comparison.case_axis} axis; {name}{beside} per case"
    if not comparison.method_is_default:
        reason = "chosen with --method"
    elif comparison.paired:
        reason = "the default for runs paired at sweep time"
    else:
        reason = "the default for runs not paired at sweep time"
    if comparison.sequential is not None:
        looks = max((len(v) for v in comparison.sequential["looks"].values()), default=0)  # most of any
        run = comparison.sequential["run"]
        whose = "" if rate is None else f"{METHOD_NAMES[rate]}'s "
        name += (
            f', {whose}sequential p-values from the {looks} looks run "{run}" recorded with '
            "--stop-when-settled"
        )
    line = f"method {comparison.method_phrase} ({name}), {reason}"
    if rate is not None and comparison.case_axis is None:
        runs = "runs paired at sweep time" if comparison.paired else "runs not paired at sweep time"
        line += (
            f"; {METHOD_NAMES[rate]}, the default for {runs}, gates too: a row rose or fell when "
            "either test says so"
        )
    return line


def trade_line(condition: ConditionResult) -> str:
    """`trade <condition>: X fell, Y rose`; `..., any failure rose` when only the total rose."""
    union = condition.any_failure
    rose = condition.rose or ((union.outcome,) if union is not None and union.verdict == "rose" else ())
    return f"trade {condition.label}: {' and '.join(condition.fell)} fell, {' and '.join(rose)} rose"


def _value(value: Any) -> str | None:
    """A source value short enough to print beside its name, as text; None otherwise."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = "-" if value is None else str(value)
        return text if len(text) <= 40 else None
    return None


def source_line(comparison: Comparison) -> str | None:
    """`source differs: model (a -> b), task_args`; None when nothing differs (or no source)."""
    if not comparison.source_differences:
        return None
    parts = []
    for difference in comparison.source_differences:
        before, after = _value(difference.before), _value(difference.after)
        shown = f" ({before} -> {after})" if before is not None and after is not None else ""
        parts.append(f"{difference.key}{shown}")
    return f"source differs: {', '.join(parts)}"


def summary_lines(comparison: Comparison) -> list[str]:
    lines = [
        headline_line(comparison),
        method_line(comparison),
        f"before {comparison.before.name}",
        f"after {comparison.after.name}",
    ]
    source = source_line(comparison)
    lines += [source] if source else []
    lines += [trade_line(c) for c in comparison.conditions if c.verdict == "trade"]
    return lines


def _results_table(
    comparison: Comparison,
    conditions: Sequence[ConditionResult],
    title: str,
    *,
    pooled: bool,
    only_moved: bool = False,
) -> Table:
    """One row per (condition, event): the per-condition table, the pooled one (`pooled`: a
    column of the cases that moved each way) or the per-case detail (`only_moved`: the events
    whose d_k is not 0)."""
    paired = comparison.pooled_test == "sign_flip" if pooled else comparison.method == "mcnemar"
    logrank = comparison.method == "logrank_bh" and not pooled
    beside = logrank and comparison.rate_method is not None  # the rate test's q beside log-rank's
    headers = ["group" if pooled else "condition", "verdict", "outcome", "before", "after"]
    headers += ["b", "c"] if paired else []
    headers += ["cases +/-"] if pooled else []
    headers += ["chi2"] if logrank else []
    headers += ["p", "q"]
    headers += [rate_q_header(comparison)] if beside else []
    headers += ["result"]
    rows: list[tuple[str, ...]] = []
    styles: list[tuple[str | None, ...]] = []
    for condition in conditions:
        shown = [row for row in condition.outcomes if row.d] if only_moved else list(condition.outcomes)
        shown += [condition.any_failure] if condition.any_failure is not None else []
        for i, row in enumerate(shown):
            first = i == 0
            cells = [condition.label if first else "", condition.verdict if first else "", row.outcome]
            cells += [rate_text(row.before), rate_text(row.after)]
            if paired:
                cells += [str(row.b) if row.b is not None else "-", str(row.c) if row.c is not None else "-"]
            if pooled:
                cells += ["-" if row.cases_up is None else f"{row.cases_up}/{row.cases_down}"]
            if logrank:
                cells += ["-" if row.statistic is None else f"{row.statistic:.2f}"]
            cells += [p_text(row.p), p_text(row.q_value)]
            cells += [rate_q(row)] if beside else []
            cells += [result_text(row)]
            rows.append(tuple(cells))
            style: list[str | None] = [None] * len(cells)
            style[1] = VERDICT_STYLES.get(condition.verdict) if first else None
            style[-1] = VERDICT_STYLES.get(row.verdict)
            styles.append(tuple(style))
    right = {3, 4} | set(range(5, len(headers) - 1))
    return Table(title, tuple(headers), tuple(rows), frozenset(right), tuple(styles))


def _rates_title(comparison: Comparison) -> str:
    unit = f" {comparison.t_unit}" if comparison.t_unit else ""
    return f"rates by {_number(comparison.horizon)}{unit}, 95% Wilson intervals (* censored before it)"


def rate_q_header(comparison: Comparison) -> str:
    """`McNemar q` (or `Fisher q`): the column of the rate test beside log-rank."""
    return f"{METHOD_NAMES[comparison.rate_method or 'mcnemar']} q"


def p_legend(comparison: Comparison) -> str:
    """Which p the table prints, where it is a mid-p: `p: McNemar mid-p (...); `, else nothing."""
    if comparison.pooled_test is not None:
        test = "sign-flip"
    elif comparison.method == "mcnemar":
        test = "McNemar"
    else:
        return ""
    return f"p: {test} mid-p (the exact p is p_exact in --json); "


def _tests_legend(comparison: Comparison) -> str:
    """The per-condition table's legend of its p and q columns."""
    family = f"Benjamini-Hochberg over {comparison.tests} tests"
    if comparison.rate_method is None:
        return f"{p_legend(comparison)}q: {family}"
    rate = METHOD_NAMES[comparison.rate_method]
    p = "mid-p and exact p" if comparison.rate_method == "mcnemar" else "p"
    return (
        f"chi2, p: the log-rank test; q: {family}; {rate} q: {rate} on the rates, "
        f"Benjamini-Hochberg over its own {comparison.tests} tests (its {p} in --json)"
    )


def any_failure_title(comparison: Comparison) -> str:
    """`; any failure: the union of the failure outcomes, Benjamini-Hochberg over its own 9
    tests`, or nothing when the comparison has no union rows."""
    if not comparison.any_failure_tests:
        return ""
    return (
        "; any failure: the union of the failure outcomes, Benjamini-Hochberg over its own "
        f"{_plural(comparison.any_failure_tests, 'test')}"
    )


def condition_table(comparison: Comparison) -> Table:
    """The per-condition table; for runs with a case axis, the pooled one (the headline family)."""
    if comparison.case_axis is not None:
        return pooled_table(comparison)
    title = f"{_rates_title(comparison)}; {_tests_legend(comparison)}{any_failure_title(comparison)}"
    return _results_table(comparison, comparison.conditions, title, pooled=False)


def pooled_table(comparison: Comparison) -> Table:
    unit = f" {comparison.t_unit}" if comparison.t_unit else ""
    title = (
        f"benchmark, pooled over the {comparison.case_axis} cases: rates by {_number(comparison.horizon)}"
        f"{unit}, 95% Wilson intervals on the case-jackknife effective n (* censored before it); "
        f"cases +/-: cases with more events after / fewer; {p_legend(comparison)}q: Benjamini-Hochberg over "
        f"{_plural(comparison.tests, 'pooled test')}{any_failure_title(comparison)}"
    )
    return _results_table(comparison, comparison.conditions, title, pooled=True)


def shown_cases(comparison: Comparison, cases: str = "moved") -> tuple[list[ConditionResult], int]:
    """(the per-case rows to draw, how many more cases moved): the cases that moved (some
    d_k != 0), most-moved first (the sum of |d_k| over the events; ties in the runs' order), at
    most CASES_SHOWN of them; with `cases="all"` every case, in the same order."""
    order = comparison.cases_by_movement()
    if cases == "all":
        return order, 0
    moved = [c for c in order if c.movement]
    return moved[:CASES_SHOWN], max(0, len(moved) - CASES_SHOWN)


def case_table(comparison: Comparison, cases: str = "moved") -> Table:
    """The per-case detail table, its own family; its caption counts what is left out."""
    shown, more = shown_cases(comparison, cases)
    which = "every case" if cases == "all" else "the events that moved in the cases that moved, most first"
    title = (
        f"per case (detail, {which}): q: Benjamini-Hochberg over "
        f"{_plural(comparison.case_tests, 'per-case test')}, a family of their own"
    )
    if more:
        caption = f"… and {more:,} more cases that moved (--cases all shows every case)"
    elif not shown:
        caption = f"no case moved ({len(comparison.cases):,} cases; --cases all shows every case)"
    else:
        caption = None
    table = _results_table(comparison, shown, title, pooled=False, only_moved=cases != "all")
    return Table(table.title, table.headers, table.rows, table.right, table.styles, caption=caption)


def _errors(errors: Sequence[Any]) -> str:
    return ", ".join(f"{e.kind} {e.count:,}" for e in errors) or "-"


def coverage_table(comparison: Comparison, cases: str = "moved") -> Table:
    """Episodes without an outcome per condition; for runs with a case axis only the cases
    that have some (at most CASES_SHOWN of them unless `cases="all"`)."""
    headers = ("condition", "before", "after", "errors before", "errors after", "q")
    rows = []
    styles = []
    listed = list(comparison.coverage)
    caption = None
    if comparison.case_axis is not None:
        listed = [row for row in listed if row.before_without or row.after_without]
        if cases != "all" and len(listed) > CASES_SHOWN:
            caption = f"… and {len(listed) - CASES_SHOWN:,} more cases (--cases all shows every case)"
            listed = listed[:CASES_SHOWN]
    for row in listed:
        rows.append(
            (
                row.label,
                f"{row.before_without:,}/{row.before_rows:,}",
                f"{row.after_without:,}/{row.after_rows:,}",
                _errors(row.before_errors),
                _errors(row.after_errors),
                p_text(row.q_value),
            )
        )
        styles.append((None, None, None, None, None, "bold red" if row.differs else None))
    return Table(
        "coverage: episodes without an outcome (left out of every rate)",
        headers,
        tuple(rows),
        frozenset({1, 2, 5}),
        tuple(styles),
        caption=caption,
    )


def coverage_is_complete(comparison: Comparison) -> bool:
    return all(not row.before_without and not row.after_without for row in comparison.coverage)


def complete_coverage_line(comparison: Comparison) -> str:
    before = sum(row.before_rows for row in comparison.coverage)
    after = sum(row.after_rows for row in comparison.coverage)
    return f"coverage: every episode has an outcome ({before:,} before, {after:,} after)"


def tail_lines(comparison: Comparison, notes: Sequence[str]) -> list[str]:
    return [f"note: {n}" for n in notes] + [f"warning: {w}" for w in comparison.warnings]


def plain_report(
    comparison: Comparison, notes: Sequence[str] = (), *, cases: str = "moved",
    attribution: Attribution | None = None,
) -> str:
    """The whole report as plain text: no ANSI codes, no box characters, fixed column order;
    with `attribution` (diff's), each moved row's "where" block under it and the legend line
    after the table (render.attribution)."""
    lines = summary_lines(comparison)
    lines += ["", *table_lines(comparison, attribution)]
    if comparison.case_axis is not None:
        lines += ["", *plain_lines(case_table(comparison, cases))]
    if coverage_is_complete(comparison):
        lines += ["", complete_coverage_line(comparison)]
    else:
        lines += ["", *plain_lines(coverage_table(comparison, cases))]
    tail = tail_lines(comparison, notes)
    if tail:
        lines += ["", *tail]
    return "\n".join(lines) + "\n"


def table_lines(comparison: Comparison, attribution: Attribution | None = None) -> list[str]:
    """The per-condition (or pooled) table as plain lines, the where blocks under its moved rows
    and the attribution's legend after it."""
    table = condition_table(comparison)
    drawn = plain_lines(table)
    if attribution is None:
        return drawn
    keys = [(c.key, row.outcome) for c in comparison.conditions for row in rows_of(c)]
    drawn, left = under_rows(drawn, 1 + (table.title is not None), keys, attribution, comparison.q)
    return [*drawn, *legend_lines(attribution), *left]


def rows_of(condition: ConditionResult) -> list[OutcomeResult]:
    """A condition's rows as drawn: one per event, then its "any failure" row (if any)."""
    return [*condition.outcomes, *([condition.any_failure] if condition.any_failure is not None else [])]
