"""How a verify's results read: the verdict and replicate tables (as `prove_common.tables.Table`
data, drawn plain or by Rich by proveai.render.snapshot), the gate's verdict in words, the
summary line and the markdown step summary (which proveai.ci.step_summary appends to the
GitHub Actions run page).

Returns data and strings; never prints.
"""

from __future__ import annotations

from collections.abc import Sequence

from prove_common.step_summary import md_cell, md_table
from prove_common.tables import Column, Table, clip_text
from proveai.diff.verdict import Status
from proveai.snapshot.verify import GateVerdict, VerifyResult

VERDICT_HEADERS = ("Agent", "Verdict", "Change", "Rationale")
# how a status reads in a table, a step summary and report.html
SYMBOLS = {
    Status.UNCHANGED: "✓",
    Status.DRIFTED: "~",
    Status.REGRESSED: "✗",
    Status.MISSING: "✗",
    Status.ITERATION_COUNT_CHANGED: "✗",
    Status.INCONCLUSIVE: "?",
    Status.NEW: "+",
}


def verdict_cells(result: VerifyResult) -> list[tuple[str, str, str, str]]:
    return [
        (v.agent, f"{SYMBOLS.get(v.status, '')} {v.status}".strip(), v.change or "—", v.rationale or "—")
        for v in result.verdicts
    ]


# the symbol that opens a verdict cell -> its colour on a terminal
_SYMBOL_STYLES = {"✓": "green", "~": "yellow", "✗": "bold red", "?": "yellow", "+": "cyan"}


def snapshot_table(title: str | None, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    """A `proveai snapshot` table: Rich's heavy-headed look on a terminal, cells folded rather
    than cut; on a pipe the last column is clipped to 100 characters (readable in a CI log).
    A second column opening with a verdict symbol is coloured by it."""
    cells = tuple(tuple(str(cell) for cell in row) for row in rows)
    styles = tuple(
        (None, _SYMBOL_STYLES.get(row[1][:1]), *([None] * (len(row) - 2))) if len(row) > 1 else (None,)
        for row in cells
    )
    last = len(headers) - 1
    return Table(
        title=title,
        headers=tuple(headers),
        rows=cells,
        styles=styles,
        columns={
            i: Column(no_wrap=False, overflow="fold", clip=100 if i == last else None)
            for i in range(len(headers))
        },
        box="HEAVY_HEAD",
        title_justify="center",
        pad_edge=True,
    )


def replicate_rows(result: VerifyResult) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in result.replicate_verdicts:
        dist = ", ".join(f"{k} {v}" for k, v in r.fresh_counts.items()) or "—"
        pinned = ", ".join(f"{k} {v}" for k, v in r.pinned_counts.items()) or "—"
        rows.append(
            (
                r.agent,
                f"n={r.n_fresh}: {dist}",
                f"n={r.n_pinned}: {pinned}",
                f"{r.p_value:.3g}",
                f"{r.p_adjusted:.3g}",
                "FAIL" if r.fails else "pass",
            )
        )
    return rows


REPLICATE_HEADERS = ("Agent", "Fresh replicates", "Pinned (leave-one-out)", "p", "p (BH)", "Gate")


# the gate's verdict in words
GATE_WORDS = {
    GateVerdict.PASS: "pass",
    GateVerdict.FAIL: "FAIL (regression)",
    GateVerdict.NOT_GRADED: "not graded (hash-only mismatch)",
    GateVerdict.INCONCLUSIVE: "INCONCLUSIVE",
}


def verdict_word(result: VerifyResult) -> str:
    """The gate's verdict on one snapshot in words."""
    unchecked = len(result.unjudged)
    if result.gate == GateVerdict.PASS and unchecked:
        # the default exit stays 0 (documented), but the line must not read as a clean pass
        return f"pass, but {unchecked} change(s) NOT checked (--strict-judge exits 3)"
    return GATE_WORDS[result.gate]


def summary_line(result: VerifyResult) -> str:
    counts = result.metrics.counts
    parts = [f"{n} {status}" for status, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    return (
        f"snapshot '{result.snapshot.name}' v{result.snapshot.version}: {len(result.verdicts)} agent(s) — "
        f"{', '.join(parts) or 'nothing graded'} · {result.mode} · run {result.run_id} · "
        f"{verdict_word(result)}"
    )


def step_summary_markdown(
    results: Sequence[VerifyResult], targeting_reason: str | None, failures: Sequence[str] = ()
) -> str:
    """The verdict table GitHub shows on the workflow run page (and what could not be verified)."""
    lines = ["## proveai snapshot verify", ""]
    if targeting_reason:
        lines += [f"_{targeting_reason}_", ""]
    for failure in failures:
        lines += [f"> **error:** {md_cell(clip_text(failure, 500))}", ""]
    for result in results:
        lines += [
            f"### Snapshot `{result.snapshot.name}` v{result.snapshot.version} — "
            f"{verdict_word(result)}",
            "",
        ]
        cells = [(*row[:3], clip_text(row[3], 300)) for row in verdict_cells(result)]
        lines += md_table(VERDICT_HEADERS, cells)
        if result.replicate_verdicts:
            headers = ("Agent", "Fresh", "Pinned", "p", "p (BH)", "Gate")
            lines += ["", *md_table(headers, replicate_rows(result))]
        for note in result.notes:
            lines.append(f"\n> {md_cell(note)}")
        lines.append("")
    return "\n".join(lines) + "\n"
