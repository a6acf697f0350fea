"""The self-contained HTML report of a replay: render_html -> str, write_html_report -> file.

One file, CSS inlined, no script at all (a Content-Security-Policy forbids any), no network.
Every captured string goes through Jinja2's autoescaping. The page itself (`render_page`: the
agent graph, one section per trace, one panel per verdict) is shared with a snapshot verify's
report.html (proveai.render.verify_page). `proveai.report` is this module's public address.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from prove_common.files import clear_stale_temps, write_text_atomic
from prove_common.jsonio import utc_now_iso
from prove_common.text import value_as_text
from proveai.diff.verdict import Status, Tier
from proveai.render.graph import build_graph
from proveai.replay.engine import ReplayedSpan, ReplayedTrace
from proveai.traces.trace import Span, Trace

# the edge statuses every report counts, in this order
STATUSES = (
    Status.UNCHANGED,
    Status.DRIFTED,
    Status.REGRESSED,
    Status.INCONCLUSIVE,
    Status.PATH_CHANGED,
    Status.ITERATION_COUNT_CHANGED,
)
MAX_SHOWN_CHARS = 20000


def _show(value: Any) -> str:
    if value is None:
        return ""
    return value_as_text(value, limit=MAX_SHOWN_CHARS, lines=True)


def _input_of(span: Span, replayed: ReplayedSpan | None) -> str:
    messages = list(getattr(replayed, "messages_sent", ()) or ()) or list(span.input_messages or [])
    if messages:
        return "\n\n".join(f"[{m.get('role', '?')}]\n{_show(m.get('content'))}" for m in messages)
    inputs = getattr(replayed, "inputs", None) or span.inputs
    return _show(inputs)


def _diff_lines(unified: str) -> list[tuple[str, str]]:
    lines = []
    for line in unified.splitlines()[:2000]:
        if line.startswith(("+++", "---")):
            cls = "meta"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        lines.append((cls, line))
    return lines


def panel_row(
    *,
    edge: str,
    status: str,
    tier: Tier,
    change: str | None,
    rationale: str,
    confidence: float,
    unified: str,
    span: Span | None,
    old: Any,
    new: Any,
    replayed_span: ReplayedSpan | None = None,
) -> dict[str, Any]:
    """One verdict's row and panel: its edge, status and tier (as its level), the input the
    agent saw (`span`'s, or what the replay sent), both outputs and their diff."""
    return {
        "edge": edge,
        "status": status,
        "tier": tier.level,
        "change": change or "",
        "rationale": rationale,
        "inconclusive": status == Status.INCONCLUSIVE,
        "confidence": f"{confidence:.2f}",
        "input": _input_of(span, replayed_span) if span is not None else "",
        "old": _show(old),
        "new": _show(new),
        "diff": _diff_lines(unified),
        "model": getattr(replayed_span, "model", None) or (span.model if span is not None else None) or "",
        "note": getattr(replayed_span, "note", None) or "",
        "open": status != Status.UNCHANGED,
    }


def trace_section(trace: Trace, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One trace's section of the page: its header, its verdict rows and their counts."""
    counts = Counter(row["status"] for row in rows)
    return {
        "trace_id": trace.trace_id,
        "name": trace.name,
        "outcome": trace.outcome or "—",
        "rows": list(rows),
        "counts": [(s, counts.get(s, 0)) for s in (*STATUSES, *_others(counts)) if counts.get(s)],
    }


def _trace_view(trace: Trace, replayed: ReplayedTrace) -> dict[str, Any]:
    spans = {s.span_id: s for s in trace.spans}
    rows = [
        panel_row(
            edge=verdict.edge,
            status=verdict.status,
            tier=verdict.tier,
            change=verdict.change,
            rationale=verdict.rationale,
            confidence=verdict.confidence,
            unified=verdict.unified,
            span=spans.get(verdict.span_id),
            old=verdict.old_output,
            new=verdict.new_output,
            replayed_span=replayed.span(verdict.span_id) if verdict.span_id else None,
        )
        for verdict in replayed.edge_verdicts
    ]
    return trace_section(trace, rows)


def render_page(
    sections: Sequence[dict[str, Any]],
    edges: Iterable[tuple[str | None, str, str]],
    *,
    title: str,
    run_id: str | None = None,
    models: Sequence[str] = (),
    judge_model: str | None = None,
    embedder: str | None = None,
    generated: str | None = None,
) -> str:
    """The page for trace sections (`trace_section`), with the agent graph and the totals of
    every verdict's (parent, child, status) in `edges`."""
    # jinja2: ~40 ms, only when a report is written
    from jinja2 import Environment, PackageLoader, select_autoescape

    edges = list(edges)
    totals = Counter(status for _, _, status in edges)
    env = Environment(
        loader=PackageLoader("proveai", "render/templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    return template.render(
        title=title,
        run_id=run_id,
        graph=build_graph(edges),
        traces=list(sections),
        # the six edge statuses always; any other one seen (missing, new) too
        totals=[(s, totals.get(s, 0)) for s in (*STATUSES, *_others(totals))],
        n_traces=len(sections),
        n_edges=len(edges),
        models=list(models),
        judge_model=judge_model or "—",
        embedder=embedder or "none",
        generated=generated or utc_now_iso(),
    )


def render_html(
    pairs: Iterable[tuple[Trace, ReplayedTrace]],
    judge_model: str | None = None,
    *,
    title: str = "proveai replay report",
    run_id: str | None = None,
    embedder: str | None = None,
    generated: str | None = None,
) -> str:
    """The report for (original Trace, ReplayedTrace) pairs whose edge_verdicts are filled in."""
    pairs = list(pairs)
    verdicts = [v for _, replayed in pairs for v in replayed.edge_verdicts]
    models: list[str] = []
    for trace, replayed in pairs:
        for name in [*(s.model for s in trace.spans), *getattr(replayed, "models", [])]:
            if name and name not in models:
                models.append(name)
    return render_page(
        [_trace_view(trace, replayed) for trace, replayed in pairs],
        [(v.parent, v.child, v.status) for v in verdicts],
        title=title,
        run_id=run_id,
        models=models,
        judge_model=judge_model,
        embedder=embedder,
        generated=generated,
    )


def write_html_report(
    pairs: Iterable[tuple[Trace, ReplayedTrace]],
    path: str | os.PathLike[str],
    judge_model: str | None = None,
    **options: Any,
) -> Path:
    """Render and write the report atomically to `path` (parent folders created); returns the path."""
    target = Path(path)
    html = render_html(pairs, judge_model, **options)
    target.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_temps(target.parent, target.name)  # what a killed writer of this page left
    write_text_atomic(target, html, durable=False)
    return target


__all__ = ["panel_row", "render_html", "render_page", "trace_section", "write_html_report"]


def _others(counts: Counter[str]) -> list[str]:
    """Statuses beyond the five edge statuses that occur, in a stable order."""
    return sorted(s for s in counts if s not in STATUSES)
