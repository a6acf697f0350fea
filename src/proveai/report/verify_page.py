"""report.html of a snapshot verify run (`proveai snapshot verify` writes it beside the run).

With a fresh trace, the page is the replay engine's report (`proveai.report.render_html`:
agent graph coloured by regressions, per-agent panels with input, pinned and fresh output,
unified diff and rationale), fed one verdict per agent; the verdict table and, for
replicates, the replicate test are added at the top. Without a fresh trace (what-if or a
fixture-only check) a plain self-contained table is written. UTF-8, inline CSS, no script.
"""

from __future__ import annotations

import difflib
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove_common.text import value_as_text
from proveai.diff.grading import EdgeVerdict
from proveai.report import render_html
from proveai.snapshot.fromtrace import load_trace_file
from proveai.snapshot.grading import SYMBOLS
from proveai.snapshot.verify import VerifyResult

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

_TIERS = {"tier1": 1, "tier2": 2, "judge": 3, "cache": 3}


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


@dataclass
class _Replayed:
    """The fresh run in the shape the replay report reads (a ReplayedTrace)."""

    edge_verdicts: list[Any]
    models: list[str] = field(default_factory=list)

    def span(self, span_id: str) -> None:
        return None  # inputs come from the fresh span itself


def _pairs(result: VerifyResult, fresh_trace: Any) -> list[tuple[Any, _Replayed]]:
    verdicts = []
    for row in result.verdicts:
        pinned = result.snapshot.expected(row.agent) if row.agent in result.snapshot.agents else ()
        spans = fresh_trace.spans_named(row.agent)
        old = pinned[0].output if pinned else None
        new = spans[0].output if spans else None
        unified = (
            "\n".join(
                difflib.unified_diff(
                    value_as_text(old, lines=True).splitlines(),
                    value_as_text(new, lines=True).splitlines(),
                    "pinned",
                    "fresh",
                    lineterm="",
                )
            )
            if old != new
            else ""
        )
        definition = result.snapshot.agents.get(row.agent)
        parent = definition.parent_agent if definition else (spans[0].parent_agent if spans else None)
        verdicts.append(
            EdgeVerdict(
                parent=parent,
                child=row.agent,
                span_id=spans[0].span_id if spans else "",
                status=row.status,
                tier=_TIERS.get(row.tier, 0),
                rationale=row.rationale,
                confidence=1.0,
                old_output=old,
                new_output=new,
                unified=unified,
                change=row.change,
                inconclusive=row.status == "inconclusive",
            )
        )
    return [(fresh_trace, _Replayed(verdicts))]


def render_verify_html(result: VerifyResult, fresh_trace: Any = None) -> str:
    if fresh_trace is None:
        return render_plain_html(result)
    page = render_html(
        _pairs(result, fresh_trace),
        title=f"proveai snapshot verify — {result.snapshot.name} v{result.snapshot.version}",
        run_id=result.run_id,
    )
    marker = page.find("<body")
    if marker < 0:
        return page
    insert_at = page.find(">", marker) + 1
    return page[:insert_at] + f"<style>{_SUMMARY_CSS}</style>" + summary_html(result) + page[insert_at:]


def write_verify_page(result: VerifyResult) -> Path:
    """<run>/report.html of a verify: the replay report of its first fresh trace, or the plain
    table when the verify kept none (what-if, fixture-only check)."""
    fresh_files = sorted((result.run_dir / "fresh").glob("*.json"))
    fresh_trace = load_trace_file(fresh_files[0]) if fresh_files else None
    path = result.run_dir / "report.html"
    path.write_text(render_verify_html(result, fresh_trace), encoding="utf-8")
    return path
