"""grade_outputs: one agent's old vs new output through Tier 1 -> Tier 2 -> Tier 3.

The per-pair grading without topology, shared by replay's attribution (every edge of a trace)
and snapshot verify (every pinned agent). Returns a `Grade` (proveai.diff.verdict): unchanged,
drifted or regressed from the tier that decided, or inconclusive (the texts differ and the
judge could not decide).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from prove_common.text import value_as_text
from proveai.cache import ResponseCache
from proveai.diff.judge import JudgeStats, llm_judge
from proveai.diff.tier1 import numbers_of, text_diff, tier1_for_kind
from proveai.diff.tier2 import DEFAULT_REGRESSED, DEFAULT_UNCHANGED, embedding_grade
from proveai.diff.verdict import EdgeVerdict, Grade, Status, Tier
from proveai.providers.base import Provider
from proveai.providers.embedding import Embedder

__all__ = ["EdgeVerdict", "grade_outputs"]  # EdgeVerdict: the public map's address for it


def _numbers_text(counter: Counter[tuple[str, float]]) -> str:
    return ", ".join(
        f"{unit.replace('%', '')}{value:g}{'%' if '%' in unit else ''}" for unit, value in counter
    )


def grade_outputs(
    old: Any,
    new: Any,
    kind: str = "UNKNOWN",
    input_messages: Sequence[Mapping[str, Any]] | None = None,
    embedder: Embedder | None = None,
    judge_model: str | None = None,
    judge_provider: Provider | None = None,
    cache: ResponseCache | None = None,
    *,
    thresholds: tuple[float, float] = (DEFAULT_UNCHANGED, DEFAULT_REGRESSED),
    name: str = "",
    old_inputs: Any = None,
    new_inputs: Any = None,
    judge_max_tokens: int | None = None,
    judge_stats: JudgeStats | None = None,
) -> Grade:
    """Grade one agent's old vs new output (the per-edge logic without topology).

    `judge_max_tokens` and `judge_stats` go to the judge (llm_judge's max_tokens and stats).
    """
    structural = tier1_for_kind(
        kind,
        old,
        new,
        name=name,
        old_inputs=old_inputs,
        new_inputs=new_inputs,
        embedding_threshold=thresholds[0],
    )
    if structural is not None:
        return structural
    diff = text_diff(old, new)
    unified = diff["unified"]

    def tier1(status: Status, rationale: str) -> Grade:
        return Grade(status, Tier.TIER1, rationale, unified)

    if diff["equal"]:
        if diff["kind"] == "json":
            return tier1(Status.UNCHANGED, "JSON deep-equal")
        if old == new:
            return tier1(Status.UNCHANGED, "identical output")
        return tier1(Status.UNCHANGED, "text equal (whitespace-normalised)")
    if diff["kind"] == "numeric":
        before, after = numbers_of(str(old)), numbers_of(str(new))
        lost, gained = before - after, after - before
        changed = f"-{_numbers_text(lost) or '∅'} +{_numbers_text(gained) or '∅'}"
        return tier1(Status.REGRESSED, f"numbers changed: {changed}")
    if diff["volatile_only"]:  # not a factual swap, but not silently equal either
        return tier1(Status.DRIFTED, "only volatile tokens differ (ids, timestamps)")
    if diff["kind"] == "json":
        return tier1(Status.REGRESSED, "JSON values differ")
    old_text, new_text = value_as_text(old), value_as_text(new)
    if embedder is not None:
        tier2 = embedding_grade(embedder, old_text, new_text, thresholds, unified)
        if tier2 is not None:
            return tier2
    result = llm_judge(
        list(input_messages or []),
        old_text,
        new_text,
        model=judge_model,
        provider=judge_provider,
        cache=cache,
        max_tokens=judge_max_tokens,
        stats=judge_stats,
    )
    judged, confidence = result["verdict"], float(result["confidence"])
    rationale = result["rationale"] or judged

    def tier3(status: Status, text: str) -> Grade:
        return Grade(status, Tier.JUDGE, text, unified, confidence)

    if judged == "worse":
        return tier3(Status.REGRESSED, f"judge: {rationale}")
    if judged == "better":
        return tier3(Status.DRIFTED, f"judge (better): {rationale}")
    if judged == "equivalent":
        return tier3(Status.DRIFTED, f"judge: {rationale}")
    # skip: the rationale already says "judge skip: ..."; the status says it without parsing text
    return Grade(Status.INCONCLUSIVE, Tier.JUDGE, rationale, unified, 0.0, judged=False)
