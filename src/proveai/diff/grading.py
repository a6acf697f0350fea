"""grade_outputs: one agent's old vs new output through Tier 1 -> Tier 2 -> Tier 3.

The per-edge grading without topology, shared by replay's attribution (every edge of a trace)
and snapshot verify (every pinned agent). Returns an EdgeVerdict; the statuses are:
unchanged, drifted, regressed, path_changed, iteration_count_changed, inconclusive (the texts
differ and the judge could not decide).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from prove_common.text import value_as_text
from proveai.diff.judge import llm_judge
from proveai.diff.tier1 import numbers_of, text_diff, tier1_for_kind
from proveai.diff.tier2 import DEFAULT_REGRESSED, DEFAULT_UNCHANGED, embedding_grade

UNCHANGED, DRIFTED, REGRESSED = "unchanged", "drifted", "regressed"
PATH_CHANGED, ITERATION_COUNT_CHANGED = "path_changed", "iteration_count_changed"
INCONCLUSIVE = "inconclusive"
STATUSES = (UNCHANGED, DRIFTED, REGRESSED, INCONCLUSIVE, PATH_CHANGED, ITERATION_COUNT_CHANGED)
ROOT = "root"


@dataclass(frozen=True)
class EdgeVerdict:
    """The verdict of one parent→child edge of one trace.

    tier: 1 structural, 2 embeddings, 3 judge, 0 topology (path/iteration changes, or a span
    that could not be re-executed). change: "direct edit" (the agent was overridden),
    "downstream" (only its inputs changed) or None. inconclusive: True when the outputs'
    texts differ and the judge could not decide (no provider, error, malformed reply): the
    status is then "inconclusive" with confidence 0.
    """

    parent: str | None
    child: str
    span_id: str
    status: str
    tier: int
    rationale: str
    confidence: float
    old_output: Any
    new_output: Any
    unified: str
    change: str | None = None
    inconclusive: bool = False

    @property
    def edge(self) -> str:
        return f"{self.parent or ROOT}→{self.child}"

    def to_dict(self) -> dict[str, Any]:
        return {"edge": self.edge, **asdict(self)}


def _numbers_text(counter: Counter[tuple[str, float]]) -> str:
    return ", ".join(
        f"{unit.replace('%', '')}{value:g}{'%' if '%' in unit else ''}" for unit, value in counter
    )


def grade_outputs(
    old: Any,
    new: Any,
    kind: str = "UNKNOWN",
    input_messages: Sequence[Mapping[str, Any]] | None = None,
    embedder: Any = None,
    judge_model: str | None = None,
    judge_provider: Any = None,
    cache: Any = None,
    *,
    thresholds: tuple[float, float] = (DEFAULT_UNCHANGED, DEFAULT_REGRESSED),
    name: str = "",
    old_inputs: Any = None,
    new_inputs: Any = None,
) -> EdgeVerdict:
    """Grade one agent's old vs new output (the per-edge logic without topology).

    Returns an EdgeVerdict with parent None and child `name`; callers re-label it.
    """

    def verdict(
        status: str,
        tier: int,
        rationale: str,
        confidence: float = 1.0,
        diff: str = "",
        inconclusive: bool = False,
    ) -> EdgeVerdict:
        return EdgeVerdict(
            None, name, "", status, tier, rationale, confidence, old, new, diff, inconclusive=inconclusive
        )

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
        return verdict(structural.status, 1, structural.rationale, structural.confidence, structural.unified)
    diff = text_diff(old, new)
    unified = diff["unified"]
    if diff["equal"]:
        if diff["kind"] == "json":
            rationale = "JSON deep-equal"
        elif old == new:
            rationale = "identical output"
        else:
            rationale = "text equal (whitespace-normalised)"
        return verdict(UNCHANGED, 1, rationale, 1.0, unified)
    if diff["kind"] == "numeric":
        before, after = numbers_of(str(old)), numbers_of(str(new))
        lost, gained = before - after, after - before
        rationale = f"numbers changed: -{_numbers_text(lost) or '∅'} +{_numbers_text(gained) or '∅'}"
        return verdict(REGRESSED, 1, rationale, 1.0, unified)
    if diff["volatile_only"]:  # not a factual swap, but not silently equal either
        return verdict(DRIFTED, 1, "only volatile tokens differ (ids, timestamps)", 1.0, unified)
    if diff["kind"] == "json":
        return verdict(REGRESSED, 1, "JSON values differ", 1.0, unified)
    old_text, new_text = value_as_text(old), value_as_text(new)
    if embedder is not None:
        tier2 = embedding_grade(embedder, old_text, new_text, thresholds)
        if tier2 is not None:
            status, rationale, confidence = tier2
            return verdict(status, 2, rationale, confidence, unified)
    result = llm_judge(
        list(input_messages or []),
        old_text,
        new_text,
        model=judge_model,
        provider=judge_provider,
        cache=cache,
    )
    judged, confidence = result["verdict"], float(result["confidence"])
    rationale = result["rationale"] or judged
    if judged == "worse":
        return verdict(REGRESSED, 3, f"judge: {rationale}", confidence, unified)
    if judged == "better":
        return verdict(DRIFTED, 3, f"judge (better): {rationale}", confidence, unified)
    if judged == "equivalent":
        return verdict(DRIFTED, 3, f"judge: {rationale}", confidence, unified)
    # skip: the rationale already says "judge skip: ..."; the flag says it without parsing text
    return verdict(INCONCLUSIVE, 3, rationale, 0.0, unified, inconclusive=True)
