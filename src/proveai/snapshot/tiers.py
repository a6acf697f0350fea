"""The three-tier grader verify uses for a changed output, behind the judge cache.

The tiers are the replay engine's `grade_outputs` (per-kind tier 1, text_diff, optional
embeddings, llm_judge); this module caches its decided grades per (old hash, new hash,
judge model) and turns a judge that could not run into `inconclusive`, never a pass. Each
grader asks the judge with its own max_tokens and counts the judge's requests in its own
`JudgeStats`, which the verify reports.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from proveai.cache import dispatch_cached
from proveai.diff.grading import grade_outputs
from proveai.diff.judge import JudgeStats, judge_fitness, judge_max_tokens, judge_model_name
from proveai.diff.tier2 import load_calibration
from proveai.diff.verdict import Grade, Status, Tier
from proveai.providers.base import Message, Provider, ProviderError, ProviderResponse, provider_id_of
from proveai.providers.embedding import Embedder, LocalEmbeddingAdapter, OpenAICompatibleEmbeddingAdapter
from proveai.snapshot.grading import output_diff
from proveai.snapshot.model import AgentDefinition, ExpectedIO
from proveai.store.judge_cache import JudgeCache


@dataclass
class TierGrader:
    """Callable PairGrader: tier 1 -> (tier 2 when an embedder is given) -> judge."""

    @classmethod
    def from_env(
        cls,
        judge_model: str | None,
        cache: JudgeCache | None,
        embedder: str | None = None,
        max_tokens: int | None = None,
    ) -> TierGrader:
        """Tier 2 from `embedder` ("local" | "openai" | "none"), else PROVEAI_EMBEDDER_MODEL;
        the judge's max_tokens `max_tokens`, else PROVEAI_JUDGE_MAX_TOKENS, else 200."""
        choice = (embedder or ("openai" if os.environ.get("PROVEAI_EMBEDDER_MODEL") else "none")).lower()
        instance: Embedder | None = None
        if choice == "local":
            instance = LocalEmbeddingAdapter()
        elif choice == "openai":
            instance = OpenAICompatibleEmbeddingAdapter()
        return cls(
            judge_model=judge_model_name(judge_model),
            cache=cache,
            embedder=instance,
            max_tokens=judge_max_tokens() if max_tokens is None else max_tokens,
        )

    judge_model: str
    cache: JudgeCache | None = None
    embedder: Embedder | None = None
    judge_provider: Provider | None = None  # None: dispatch(judge_model), resolved on first use
    max_tokens: int | None = None  # of each judge request; None: llm_judge's default
    judge_stats: JudgeStats = field(default_factory=JudgeStats)  # this grader's judge requests
    tier_grades: int = 0  # pairs sent to the tier stack (cache misses)
    unjudged_reasons: list[str] = field(default_factory=list)
    check_fitness: bool = True  # ask the judge known pairs before relying on it
    unfit: str | None = None  # why the judge failed its fitness check, when it did
    unreachable: bool = False  # ... because its endpoint could not be reached
    _judge_resolved: bool = field(default=False, repr=False)

    def __call__(self, pinned: ExpectedIO, fresh: ExpectedIO, definition: AgentDefinition) -> Grade:
        if self.cache is not None:
            hit = self.cache.get(pinned.output_hash, fresh.output_hash, self.judge_model)
            if hit and hit.get("status") in _DECIDED:
                rationale = str(hit.get("rationale") or "")
                return Grade(Status(hit["status"]), Tier.CACHE, rationale, output_diff(pinned, fresh))
        grade = self._grade(pinned, fresh, definition)
        if self.cache is not None and grade.judged:
            self.cache.put(
                pinned.output_hash,
                fresh.output_hash,
                self.judge_model,
                {"status": grade.status.value, "rationale": grade.rationale, "tier": grade.tier.value},
            )
        return grade

    def _grade(self, pinned: ExpectedIO, fresh: ExpectedIO, definition: AgentDefinition) -> Grade:
        """The three-tier grade, a judge that could not decide made inconclusive."""
        self._resolve_judge()
        kwargs: dict[str, Any] = {}
        thresholds = self._thresholds(definition.name)
        if thresholds is not None:
            kwargs["thresholds"] = thresholds
        self.tier_grades += 1
        try:
            grade = grade_outputs(
                pinned.output,
                fresh.output,
                definition.kind,
                pinned.input_messages,
                embedder=self.embedder,
                judge_model=self.judge_model,
                judge_provider=self.judge_provider,
                name=definition.name,
                old_inputs=pinned.inputs,
                new_inputs=fresh.inputs,
                judge_max_tokens=self.max_tokens,
                judge_stats=self.judge_stats,
                **kwargs,
            )
        except Exception as exc:  # the grader degrades; verify reports it, never passes it
            reason = f"{type(exc).__name__}: {exc}"
            self.unjudged_reasons.append(reason)
            return Grade(Status.INCONCLUSIVE, Tier.JUDGE, f"judge unavailable: {reason}", judged=False)
        rationale = str(grade.rationale or grade.status)
        if grade.tier == Tier.JUDGE and self.unfit:
            self.unjudged_reasons.append(self.unfit)
            label = "judge unavailable" if self.unreachable else "judge unfit"
            return replace(
                grade, status=Status.INCONCLUSIVE, rationale=f"{label}: {self.unfit}", judged=False
            )
        if grade.status == Status.INCONCLUSIVE:
            self.unjudged_reasons.append(rationale)
            return replace(grade, rationale=f"judge unavailable: {rationale}", judged=False)
        prefix = "" if grade.tier == Tier.JUDGE else f"tier {grade.tier.level}: "
        return replace(grade, rationale=prefix + rationale)

    def _resolve_judge(self) -> None:
        if self._judge_resolved:
            return
        self._judge_resolved = True
        if self.judge_provider is not None:
            return
        try:
            self.judge_provider = JudgeOnce(dispatch_cached(self.judge_model))
        except ValueError:
            return  # no provider for the judge model: grade_outputs says so in the rationale
        if self.check_fitness:
            fit, why = judge_fitness(
                self.judge_model, self.judge_provider, max_tokens=self.max_tokens, stats=self.judge_stats
            )
            if not fit:
                self.unfit = why
                # judge_fitness says why in words; "<judge> unreachable: <reason>" is its outage
                self.unreachable = " unreachable: " in why
                # an unfit judge is not asked again: its real verdicts would be decided by noise
                self.judge_provider = _Unfit(why)


    def _thresholds(self, agent: str) -> tuple[float, float] | None:
        """Per-agent tier-2 thresholds from proveai.calibration.json, when there is one."""
        if self.embedder is None:
            return None
        report = load_calibration()
        return report.thresholds_for(agent) if report is not None else None


_DECIDED = (Status.UNCHANGED, Status.DRIFTED, Status.REGRESSED)  # what the judge cache may hold


class JudgeOnce:
    """The judge's provider for one verify. A failure without an HTTP status (connection
    refused, timeout, no key) makes every later call fail the same way at once, instead of
    paying the provider's retries again for each changed output."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.down: Exception | None = None

    @property
    def provider_id(self) -> str:
        return provider_id_of(self.provider)  # the response cache keys as the real provider

    def supports(self, model: str) -> bool:
        supports = getattr(self.provider, "supports", None)  # as CachedProvider: a bare call() serves all
        return bool(supports(model)) if callable(supports) else True

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse | str:
        if self.down is not None:
            raise self.down
        try:
            return self.provider.call(messages, model, **kwargs)
        except ProviderError as exc:
            if exc.status is None:
                self.down = exc
            raise


class _Unfit:
    """The judge provider after a failed fitness check: every call is refused at once."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.provider_id = "unfit-judge"

    def supports(self, model: str) -> bool:
        return True  # it answers for the judge model, with a refusal

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse:
        raise ProviderError(self.why, reason=f"unfit: {self.why}")
