"""report.html of a snapshot verify run (`proveai snapshot verify` writes it beside the run).

With a fresh trace, the page is drawn like a replay's report (`proveai.render.report.render_page`:
agent graph coloured by regressions, per-agent panels with input, pinned and fresh output,
unified diff and rationale) from the verify's own agent verdicts: each panel shows the call
that decided its agent, and the diff its grade holds. The verdict table and, for replicates,
the replicate test are added at the top. Without a fresh trace (what-if or a fixture-only
check) a plain self-contained table is written. UTF-8, inline CSS, no script.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from prove_common.files import write_text_atomic
from proveai.diff.verdict import ROOT, AgentVerdict
from proveai.render.report import panel_row, render_page, trace_section
from proveai.render.verify import SYMBOLS
from proveai.snapshot.stored_traces import load_trace_file
from proveai.snapshot.verify import VerifyResult
from proveai.traces.trace import Span, Trace

T = TypeVar("T")

_PAGE_CSS = "body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1b1b}"
_SUMMARY_CSS = """
.verify-summary{padding:0 1.5rem;font-family:system-ui,sans-serif}
.verify-summary table{border-collapse:collapse;margin:1rem 0}
.verify-summary th,.verify-summary td{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
.verify-summary th{background:#f3f3f3}.verify-summary .unchanged{color:#2e7d32}
.verify-summary .drifted,.verify-summary .inconclusive,.verify-summary .new{color:#b26a00}
.verify-summary .regressed,.verify-summary .missing,
.verify-summary .iteration_count_changed{color:#c62828;font-weight:600}
"""


def summary_html(result: VerifyResult) -> str:
    esc = html.escape
    rows = "\n".join(
        f"<tr><td>{esc(v.agent)}</td>"
        f"<td class='{esc(v.status)}'>{SYMBOLS.get(v.status, '')} {esc(v.status)}</td>"
        f"<td>{esc(v.change or '—')}</td><td>{esc(v.rationale)}</td></tr>"
        for v in result.verdicts
    )
    replicate = ""
    if result.replicate_verdicts:
        body = "\n".join(
            f"<tr><td>{esc(r.agent)}</td><td>{r.fresh_failing}/{r.n_fresh}</td>"
            f"<td>{r.pinned_failing}/{r.n_pinned}</td>"
            f"<td>{r.p_value:.3g}</td><td>{r.p_adjusted:.3g}</td>"
            f"<td>{'fails' if r.fails else 'passes'}</td></tr>"
            for r in result.replicate_verdicts
        )
        replicate = (
            "<h2>Replicate test</h2><table><tr><th>Agent</th><th>fresh failing</th><th>pinned failing</th>"
            f"<th>p (Fisher, one-sided)</th><th>p (BH)</th><th>gate</th></tr>{body}</table>"
        )
    notes = "".join(f"<li>{esc(n)}</li>" for n in result.notes)
    return (
        "<section class='verify-summary'>"
        f"<h1>Snapshot '{esc(result.snapshot.name)}' v{result.snapshot.version}</h1>"
        f"<p>run {esc(result.run_id)} · mode {esc(result.mode)} · exit {result.exit_code}</p>"
        "<table><tr><th>Agent</th><th>Verdict</th><th>Change</th><th>Rationale</th></tr>"
        f"{rows}</table>{replicate}{'<ul>' + notes + '</ul>' if notes else ''}</section>"
    )


def render_plain_html(result: VerifyResult) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>proveai verify {html.escape(result.snapshot.name)}</title>"
        f"<style>{_PAGE_CSS}{_SUMMARY_CSS}</style></head><body>"
        f"{summary_html(result)}</body></html>\n"
    )


def _call(calls: Sequence[T], index: int) -> T | None:
    """The call at `index` (the one that decided the verdict), else the first, else None."""
    if index < len(calls):
        return calls[index]
    return calls[0] if calls else None


def _parent(result: VerifyResult, verdict: AgentVerdict, span: Span | None) -> str | None:
    definition = result.snapshot.agents.get(verdict.agent)
    if definition is not None:
        return definition.parent_agent
    return span.parent_agent if span is not None else None


def agent_rows(
    result: VerifyResult, fresh_trace: Trace
) -> list[tuple[tuple[str | None, str, str], dict[str, Any]]]:
    """((parent, agent, status), panel row) of each agent verdict: the row shows the pinned
    call and the fresh span that decided it, and the diff its grade holds."""
    rows: list[tuple[tuple[str | None, str, str], dict[str, Any]]] = []
    for verdict in result.verdicts:
        known = verdict.agent in result.snapshot.agents
        pinned = _call(result.snapshot.expected(verdict.agent) if known else (), verdict.decisive)
        span = _call(fresh_trace.spans_named(verdict.agent), verdict.decisive)
        parent = _parent(result, verdict, span)
        row = panel_row(
            edge=f"{parent or ROOT}→{verdict.agent}",
            status=verdict.status,
            tier=verdict.tier,
            change=verdict.change,
            rationale=verdict.rationale,
            confidence=verdict.grade.confidence,
            unified=verdict.grade.unified,
            span=span,
            old=pinned.output if pinned is not None else None,
            new=span.output if span is not None else None,
        )
        rows.append(((parent, verdict.agent, verdict.status), row))
    return rows


def render_verify_html(result: VerifyResult, fresh_trace: Trace | None = None) -> str:
    if fresh_trace is None:
        return render_plain_html(result)
    rows = agent_rows(result, fresh_trace)
    models = list(dict.fromkeys(s.model for s in fresh_trace.spans if s.model))
    page = render_page(
        [trace_section(fresh_trace, [row for _, row in rows])],
        [edge for edge, _ in rows],
        title=f"proveai snapshot verify — {result.snapshot.name} v{result.snapshot.version}",
        run_id=result.run_id,
        models=models,
    )
    marker = page.find("<body")
    if marker < 0:
        return page
    insert_at = page.find(">", marker) + 1
    return page[:insert_at] + f"<style>{_SUMMARY_CSS}</style>" + summary_html(result) + page[insert_at:]


def write_verify_page(result: VerifyResult) -> Path:
    """<run>/report.html of a verify: drawn like a replay report over its first fresh trace, or the plain
    table when the verify kept none (what-if, fixture-only check)."""
    fresh_files = sorted((result.run_dir / "fresh").glob("*.json"))
    fresh_trace = load_trace_file(fresh_files[0]) if fresh_files else None
    path = result.run_dir / "report.html"
    write_text_atomic(path, render_verify_html(result, fresh_trace), durable=False)
    return path
