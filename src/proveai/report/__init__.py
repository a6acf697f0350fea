"""The self-contained HTML report of a replay: render_html -> str, write_html_report -> file.

One file, CSS inlined, no script at all (a Content-Security-Policy forbids any), no network.
Every captured string goes through Jinja2's autoescaping.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from prove_common.jsonio import utc_now_iso
from prove_common.text import value_as_text
from proveai.report.graph import build_graph

STATUSES = ("unchanged", "drifted", "regressed", "inconclusive", "path_changed", "iteration_count_changed")
MAX_SHOWN_CHARS = 20000


def _show(value: Any) -> str:
    if value is None:
        return ""
    return value_as_text(value, limit=MAX_SHOWN_CHARS, lines=True)


def _input_of(span: Any, replayed: Any) -> str:
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


def _trace_view(trace: Any, replayed: Any) -> dict[str, Any]:
    spans = {s.span_id: s for s in trace.spans}
    rows = []
    for verdict in replayed.edge_verdicts:
        span = spans.get(verdict.span_id)
        entry = replayed.span(verdict.span_id) if verdict.span_id else None
        rows.append({
            "edge": verdict.edge,
            "status": verdict.status,
            "tier": verdict.tier,
            "change": verdict.change or "",
            "rationale": verdict.rationale,
            "inconclusive": bool(getattr(verdict, "inconclusive", False)),
            "confidence": f"{verdict.confidence:.2f}",
            "input": _input_of(span, entry) if span is not None else "",
            "old": _show(verdict.old_output),
            "new": _show(verdict.new_output),
            "diff": _diff_lines(verdict.unified),
            "model": getattr(entry, "model", None) or (span.model if span is not None else None) or "",
            "note": getattr(entry, "note", None) or "",
            "open": verdict.status != "unchanged",
        })
    counts = Counter(v.status for v in replayed.edge_verdicts)
    return {
        "trace_id": trace.trace_id,
        "name": trace.name,
        "outcome": trace.outcome or "—",
        "rows": rows,
        "counts": [(s, counts.get(s, 0)) for s in (*STATUSES, *_others(counts)) if counts.get(s)],
    }


def render_html(
    pairs: Iterable[tuple[Any, Any]],
    judge_model: str | None = None,
    *,
    title: str = "proveai replay report",
    run_id: str | None = None,
    embedder: str | None = None,
    generated: str | None = None,
) -> str:
    """The report for (original Trace, ReplayedTrace) pairs whose edge_verdicts are filled in."""
    # jinja2: ~40 ms, only when a report is written
    from jinja2 import Environment, PackageLoader, select_autoescape

    pairs = list(pairs)
    verdicts = [v for _, replayed in pairs for v in replayed.edge_verdicts]
    totals = Counter(v.status for v in verdicts)
    models: list[str] = []
    for trace, replayed in pairs:
        for name in [*(s.model for s in trace.spans), *getattr(replayed, "models", [])]:
            if name and name not in models:
                models.append(name)
    env = Environment(
        loader=PackageLoader("proveai", "report/templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    return template.render(
        title=title,
        run_id=run_id,
        graph=build_graph(verdicts),
        traces=[_trace_view(trace, replayed) for trace, replayed in pairs],
        # the six edge statuses always; any other one seen (missing, new) too
        totals=[(s, totals.get(s, 0)) for s in (*STATUSES, *_others(totals))],
        n_traces=len(pairs),
        n_edges=len(verdicts),
        models=models,
        judge_model=judge_model or "—",
        embedder=embedder or "none",
        generated=generated or utc_now_iso(),
    )


def write_html_report(
    pairs: Sequence[tuple[Any, Any]] | Iterable[tuple[Any, Any]],
    path: str | os.PathLike[str],
    judge_model: str | None = None,
    **options: Any,
) -> Path:
    """Render and write the report atomically to `path` (parent folders created); returns the path."""
    target = Path(path)
    html = render_html(pairs, judge_model, **options)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, target)
    return target


__all__ = ["render_html", "write_html_report"]


def _others(counts: Counter[str]) -> list[str]:
    """Statuses beyond the five edge statuses that occur, in a stable order."""
    return sorted(s for s in counts if s not in STATUSES)
