"""Layman narratives of capture-time detections: one trace (render) or a cohort (narrate_cohort)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from proveai.store.traces.outcomes import Detection

_HEADLINE = {
    "flagged": "flagged: at least one check failed",
    "suspect": "suspect: no check confirmed this trace is good",
    "clean": "clean: every check that ran passed",
}


def _as_dict(detection: Detection | dict[str, Any]) -> dict[str, Any]:
    if isinstance(detection, dict):
        return detection
    to_dict = getattr(detection, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise TypeError(f"expected a Detection or its dict, not {type(detection).__name__}")


def render(detection: Detection | dict[str, Any]) -> str:
    """A few plain sentences: the status, then each check that fired and why."""
    data = _as_dict(detection)
    status = str(data.get("status", "suspect"))
    lines = [f"Trace {str(data.get('trace_id', '?'))[:12]}… is {_HEADLINE.get(status, status)}."]
    fired = list(data.get("fired") or ())
    if not data.get("checks_run"):
        lines.append("No checks ran on it, so nothing vouches for it yet.")
    for item in fired:
        where = f" on {item['agent']}" if item.get("agent") else ""
        verdict = "failed" if item.get("label") == "bad" else f"gave {item.get('label')}"
        reason = f": {item['reason']}" if item.get("reason") else ""
        lines.append(f"- {item.get('name')}{where} {verdict}{reason}")
    return "\n".join(lines)


def narrate_cohort(detections: Iterable[Detection | dict[str, Any]]) -> str:
    """A summary of many detections: counts per status and the checks that fired most."""
    items = [_as_dict(d) for d in detections]
    if not items:
        return "No traces to summarise."
    statuses = Counter(str(d.get("status", "suspect")) for d in items)
    fired = Counter(
        (f.get("name"), f.get("agent"))
        for d in items
        for f in d.get("fired") or ()
        if f.get("label") == "bad"
    )
    parts = [f"{statuses[s]} {s}" for s in ("flagged", "suspect", "clean") if statuses[s]]
    lines = [f"{len(items)} trace(s): {', '.join(parts)}."]
    for (name, agent), count in fired.most_common(5):
        where = f" on {agent}" if agent else ""
        lines.append(f"- {name}{where} failed in {count} trace(s)")
    return "\n".join(lines)
