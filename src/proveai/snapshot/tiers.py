"""The three-tier grader verify uses for a changed output, behind the judge cache.

Tier 1 (text_diff: JSON deep-equal, numeric swaps, whitespace) and tier 3 (llm_judge) are
the replay engine's; this module only orders them for one (pinned, fresh) pair and caches
the decided verdict per (old hash, new hash, judge model). A judge that cannot run gives
`inconclusive`, never a pass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from proveai.snapshot.grading import (
    DRIFTED,
    INCONCLUSIVE,
    REGRESSED,
    UNCHANGED,
    PairGrade,
    output_text,
)
from proveai.snapshot.judge_cache import JudgeCache
from proveai.snapshot.model import AgentDefinition, ExpectedIO

DEFAULT_JUDGE_MODEL = "claude-haiku-4-5"


def judge_model_from_env(explicit: str | None = None) -> str:
    return explicit or os.environ.get("PROVEAI_JUDGE_MODEL") or DEFAULT_JUDGE_MODEL


@dataclass
class TierGrader:
    """Callable PairGrader: tier 1 -> (tier 2 when an embedder is given) -> judge."""

    judge_model: str
    cache: JudgeCache | None = None
    embedder: Any = None
    judge_provider: Any = None
    judge_calls: int = 0
    unjudged_reasons: list[str] = field(default_factory=list)

    def __call__(self, pinned: ExpectedIO, fresh: ExpectedIO, definition: AgentDefinition) -> PairGrade:
        if self.cache is not None:
            hit = self.cache.get(pinned.output_hash, fresh.output_hash, self.judge_model)
            if hit and hit.get("status") in (UNCHANGED, DRIFTED, REGRESSED):
                return PairGrade(hit["status"], str(hit.get("rationale") or ""), "cache")
        grade = self._grade(pinned, fresh, definition)
        if self.cache is not None and grade.judged:
            self.cache.put(
                pinned.output_hash,
                fresh.output_hash,
                self.judge_model,
                {"status": grade.status, "rationale": grade.rationale, "tier": grade.tier},
            )
        return grade

    def _grade(self, pinned: ExpectedIO, fresh: ExpectedIO, definition: AgentDefinition) -> PairGrade:
        from proveai.replay.diff import text_diff, tier1_for_kind

        structural = tier1_for_kind(
            definition.kind,
            pinned.output,
            fresh.output,
            name=definition.name,
            old_inputs=pinned.inputs,
            new_inputs=fresh.inputs,
        )
        if structural is not None:  # RETRIEVER / TOOL / EMBEDDING / PARSER: decisive, no judge
            return PairGrade(structural.status, f"tier 1: {structural.rationale}", "tier1")
        old, new = output_text(pinned.output), output_text(fresh.output)
        diff = text_diff(old, new)
        if diff.get("equal"):
            return PairGrade(UNCHANGED, f"tier 1: {diff.get('kind', 'text')} equal", "tier1")
        if diff.get("kind") in ("json", "numeric"):
            return PairGrade(REGRESSED, f"tier 1: {diff.get('kind')} values differ", "tier1")
        tier2 = self._tier2(old, new)
        if tier2 is not None:
            return tier2
        return self._judge(pinned, old, new)

    def _tier2(self, old: str, new: str) -> PairGrade | None:
        if self.embedder is None:
            return None
        from proveai.providers.embedding import cosine_similarity

        try:
            similarity = cosine_similarity(self.embedder.embed(old), self.embedder.embed(new))
        except Exception:  # a failing embedder only means escalating to the judge
            return None
        if similarity > 0.99 and _numbers(old) == _numbers(new):
            return PairGrade(UNCHANGED, f"tier 2: cosine {similarity:.3f}", "tier2")
        if similarity < 0.40:
            return PairGrade(REGRESSED, f"tier 2: cosine {similarity:.3f} (diverged)", "tier2")
        return None

    def _judge(self, pinned: ExpectedIO, old: str, new: str) -> PairGrade:
        from proveai.replay.judge import llm_judge

        self.judge_calls += 1
        kwargs: dict[str, Any] = {"model": self.judge_model}
        if self.judge_provider is not None:
            kwargs["provider"] = self.judge_provider
        try:
            result = llm_judge(pinned.input_messages or [], old, new, **kwargs)
        except Exception as exc:  # the judge degrades; verify reports it, never passes it
            result = {"verdict": "skip", "confidence": 0.0, "rationale": f"{type(exc).__name__}: {exc}"}
        verdict = str(result.get("verdict") or "skip")
        rationale = str(result.get("rationale") or "").strip()
        if verdict == "worse":
            return PairGrade(REGRESSED, f"judge: {rationale or 'worse'}", "judge")
        if verdict == "equivalent":
            return PairGrade(DRIFTED, f"judge: {rationale or 'equivalent'}", "judge")
        if verdict == "better":
            return PairGrade(DRIFTED, f"judge (better): {rationale or 'better'}", "judge")
        reason = rationale or "judge gave no verdict"
        self.unjudged_reasons.append(reason)
        return PairGrade(INCONCLUSIVE, f"judge unavailable: {reason}", "judge", judged=False)


def _numbers(text: str) -> list[str]:
    import re

    return re.findall(r"\d[\d,.]*", text)
