"""Layman narratives of edge verdicts: one verdict (render) or a list (render of a sequence)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from proveai.diff.verdict import EdgeVerdict

VerdictLike = EdgeVerdict | dict[str, Any]
"""An EdgeVerdict, or its to_dict() as a run's verdicts.json stores it."""

_MEANING = {
    "unchanged": "behaves as before",
    "drifted": "changed its wording but not, as far as we can tell, its meaning",
    "regressed": "got worse",
    "inconclusive": "changed, and whether for the worse is undecided",
    "path_changed": "now calls a different set of agents",
    "iteration_count_changed": "now runs a different number of times",
}
_TIER = {
    0: "from the trace's topology",
    1: "by a structural comparison",
    2: "by embedding similarity",
    3: "by the LLM judge",
}


def _field(verdict: object, name: str, default: Any = None) -> Any:
    """A dict's key or an object's attribute: any verdict-shaped value is read by field name."""
    if isinstance(verdict, dict):
        return verdict.get(name, default)
    return getattr(verdict, name, default)


def _one(verdict: object) -> str:
    parent = _field(verdict, "parent")
    child = _field(verdict, "child", "?")
    status = str(_field(verdict, "status", "?"))
    tier = _field(verdict, "tier", None)
    tier = getattr(tier, "level", tier)  # a Tier, or the level a stored verdict holds
    rationale = str(_field(verdict, "rationale", "") or "").strip()
    change = _field(verdict, "change")
    where = f"{child} (called by {parent})" if parent else f"{child} (a root agent)"
    sentence = f"{where} {_MEANING.get(status, status)}"
    if _field(verdict, "inconclusive", False):
        sentence += "; the LLM judge could not decide, so this is inconclusive"
    elif tier in _TIER:
        sentence += f", decided {_TIER[tier]}"
    sentence += "."
    if rationale:
        sentence += f" Why: {rationale}."
    if change == "direct edit":
        sentence += " You changed this agent directly: this is a root cause."
    elif change == "downstream":
        sentence += " Its own prompt is intact; the change reached it from upstream."
    return sentence.replace("..", ".")


def render(verdicts: VerdictLike | Iterable[VerdictLike]) -> str:
    """Plain sentences for one EdgeVerdict (or its dict) or for a sequence of them."""
    if isinstance(verdicts, dict) or hasattr(verdicts, "status"):
        return _one(verdicts)
    items = list(verdicts) if isinstance(verdicts, Iterable) else [verdicts]
    if not items:
        return "No edges were graded."
    regressed = [v for v in items if _field(v, "status") == "regressed"]
    head = (
        f"{len(regressed)} of {len(items)} edge(s) regressed."
        if regressed
        else f"None of {len(items)} edge(s) regressed."
    )
    worth = [v for v in items if _field(v, "status") != "unchanged"]
    return "\n".join([head, *(f"- {_one(v)}" for v in worth)])
