"""`inspect` output: a run's errors by kind and coverage, or one episode in full (plain text)."""

from __future__ import annotations

import json
from typing import Any

from poisson_prove.chaos.reach import reach_text
from poisson_prove.inspection.run import EpisodeDetail, Inspection
from prove_common.tables import Table, plain_lines

MAX_SPANS_SHOWN = 50


SHOWN_CONDITIONS = 3


def _conditions(labels: tuple[str, ...]) -> str:
    shown = "; ".join(labels[:SHOWN_CONDITIONS])
    return shown + (f"; +{len(labels) - SHOWN_CONDITIONS} more" if len(labels) > SHOWN_CONDITIONS else "")


def inspection_tables(result: Inspection) -> list[Table]:
    tables = []
    if result.errors:
        tables.append(
            Table(
                "errors by kind",
                ("kind", "count", "share", "conditions", "first messages"),
                tuple(
                    (
                        e.kind,
                        f"{e.count:,}",
                        f"{e.share:.1%}",
                        _conditions(e.conditions),
                        " | ".join(m[:120] for m in e.messages),
                    )
                    for e in result.errors
                ),
                frozenset({1, 2}),
            )
        )
    if result.coverage:
        tables.append(
            Table(
                "episodes without an outcome, per condition",
                ("condition", "without", "episodes", "share"),
                tuple(
                    (
                        c.label,
                        f"{c.without_outcome:,}",
                        f"{c.episodes:,}",
                        f"{c.without_outcome / c.episodes:.1%}",
                    )
                    for c in result.coverage
                ),
                frozenset({1, 2, 3}),
            )
        )
    if result.trails:
        tables.append(
            Table(
                "where failed episodes went (from their spans)",
                ("failed as", "with spans", "most frequent trails"),
                tuple(
                    (t.label, f"{t.episodes:,}", " | ".join(f"{text} ({n:,})" for text, n in t.trails))
                    for t in result.trails
                ),
                frozenset({1}),
            )
        )
    return tables


def inspection_summary(result: Inspection) -> list[str]:
    planned = f" of {result.planned:,} planned" if result.planned else ""
    outcomes = ", ".join(f"{name} {count:,}" for name, count in result.outcomes) or "none"
    lines = [
        f'run "{result.name}" ({result.run_id}), {result.status}: {result.episodes:,}{planned} episodes, '
        f"{result.without_outcome:,} without an outcome",
        f"outcomes {outcomes}",
    ]
    if not result.errors:
        lines.append("no errors: every episode has an outcome")
    reach = reach_text(result.chaos)
    if reach is not None:
        lines.append(reach)
    return lines


def inspection_text(result: Inspection) -> str:
    lines = inspection_summary(result)
    for table in inspection_tables(result):
        lines += ["", *plain_lines(table)]
    if result.errors:
        lines += ["", 'next: poisson-prove inspect --episode "CONDITION/REPLICATE" shows one episode in full']
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def episode_fields(detail: EpisodeDetail) -> list[tuple[str, str]]:
    fields = [
        ("run", f'"{detail.run_name}" ({detail.run_id})'),
        ("condition", detail.condition),
        ("cell", detail.key),
        ("cfg", _value(dict(detail.cfg))),
        ("replicate", str(detail.replicate)),
        ("seed", str(detail.seed)),
        ("outcome", _value(detail.outcome) if detail.outcome else "- (no outcome)"),
        ("t", _value(detail.t)),
        ("horizon", _value(detail.horizon)),
        ("case_id", _value(detail.case_id)),
        ("meta", _value(detail.meta)),
    ]
    if detail.error_kind or detail.error_message:
        fields += [("error", f"{detail.error_kind or 'unknown'}: {detail.error_message or ''}".rstrip(": "))]
    fields += [("started_at", _value(detail.started_at)), ("duration_s", _value(detail.duration_s))]
    return fields


def _span_lines(spans: Any) -> list[str]:
    if spans is None:
        return ["spans -"]
    items = spans if isinstance(spans, list) else spans.get("spans") if isinstance(spans, dict) else None
    if not isinstance(items, list):
        return ["spans " + _value(spans)]
    lines = [f"spans {len(items)}"]
    for span in items[:MAX_SPANS_SHOWN]:
        if isinstance(span, dict):
            name = span.get("name", "?")
            rest = {k: v for k, v in span.items() if k != "name"}
            lines.append(f"  {name} {_value(rest)}")
        else:
            lines.append(f"  {_value(span)}")
    if len(items) > MAX_SPANS_SHOWN:
        lines.append(f"  ... {len(items) - MAX_SPANS_SHOWN} more (--json shows all)")
    return lines


def episode_text(detail: EpisodeDetail) -> str:
    fields = episode_fields(detail)
    width = max(len(name) for name, _ in fields)
    lines = [f"{name.ljust(width)}  {value}" for name, value in fields]
    return "\n".join(lines + _span_lines(detail.spans)) + "\n"
