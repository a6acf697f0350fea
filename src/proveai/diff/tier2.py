"""Tier 2: embedding similarity between old and new output, and its per-agent thresholds.

embedding_grade applies the thresholds; the rest computes them from known-good outputs
(proveai.calibration.json).

For each agent, the pairwise cosine similarities between its distinct known-good outputs
give the spread of "different but fine". With q05 / q95 their 5th / 95th percentiles:

    regressed_threshold = clamp(q05 - 0.05, 0.05, 0.90)     below anything seen among good outputs
    unchanged_threshold = clamp(max(0.99, q95 + (1 - q95) / 2), 0.99, 0.999)

so an agent whose good outputs all look alike needs a closer match to count as unchanged,
and a free-form agent tolerates more divergence before Tier 2 calls it regressed. Agents with
fewer than two distinct outputs keep the defaults (0.99 / 0.40). Thresholds are only used
with the embedder model they were computed with.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from prove_common.jsonio import utc_now_iso, write_json_atomic
from prove_common.text import value_as_text
from proveai.diff.verdict import Grade, Status, Tier
from proveai.errors import ProveAIError
from proveai.providers.base import ProviderError
from proveai.providers.embedding import BatchEmbedder, Embedder, cosine_similarity
from proveai.traces.trace import Trace

DEFAULT_UNCHANGED = 0.99
DEFAULT_REGRESSED = 0.40
CALIBRATION_FILE = "proveai.calibration.json"
SCHEMA = "proveai.calibration/1"


@dataclass(frozen=True)
class AgentThresholds:
    unchanged_threshold: float
    regressed_threshold: float
    n_outputs: int
    n_pairs: int
    q05: float | None = None
    q95: float | None = None


@dataclass(frozen=True)
class CalibrationReport:
    """Thresholds per agent, for one embedder model."""

    model: str
    version: str
    created: str
    agents: dict[str, AgentThresholds] = field(default_factory=dict)

    def thresholds_for(self, agent: str, embedder_model: str | None = None) -> tuple[float, float]:
        """(unchanged, regressed) for `agent`; the defaults when unknown or for another model."""
        entry = self.agents.get(agent)
        if entry is None or (embedder_model is not None and embedder_model != self.model):
            return DEFAULT_UNCHANGED, DEFAULT_REGRESSED
        return entry.unchanged_threshold, entry.regressed_threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "model": self.model,
            "version": self.version,
            "created": self.created,
            "defaults": {"unchanged_threshold": DEFAULT_UNCHANGED, "regressed_threshold": DEFAULT_REGRESSED},
            "agents": {
                name: {
                    "unchanged_threshold": round(t.unchanged_threshold, 4),
                    "regressed_threshold": round(t.regressed_threshold, 4),
                    "n_outputs": t.n_outputs,
                    "n_pairs": t.n_pairs,
                    "q05": None if t.q05 is None else round(t.q05, 4),
                    "q95": None if t.q95 is None else round(t.q95, 4),
                }
                for name, t in sorted(self.agents.items())
            },
        }

    def write(self, path: str | os.PathLike[str]) -> Path:

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(target, self.to_dict())
        return target

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "calibration") -> CalibrationReport:
        try:
            agents = {
                str(name): AgentThresholds(
                    unchanged_threshold=float(entry["unchanged_threshold"]),
                    regressed_threshold=float(entry["regressed_threshold"]),
                    n_outputs=int(entry.get("n_outputs", 0)),
                    n_pairs=int(entry.get("n_pairs", 0)),
                    q05=entry.get("q05"),
                    q95=entry.get("q95"),
                )
                for name, entry in dict(data.get("agents") or {}).items()
            }
            return cls(str(data["model"]), str(data.get("version", "")), str(data.get("created", "")), agents)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProveAIError(
                f"{source}: not a calibration file ({type(exc).__name__}: {exc})",
                suggestions=("regenerate it: proveai calibrate --out proveai.calibration.json",),
            ) from None


def load_calibration(path: str | os.PathLike[str] = CALIBRATION_FILE) -> CalibrationReport | None:
    """The calibration at `path`, None when there is none; ProveAIError when it is unreadable."""
    file = Path(path)
    if not file.exists():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProveAIError(
            f"{file}: cannot read calibration ({exc})",
            suggestions=("regenerate it: proveai calibrate --out proveai.calibration.json",),
        ) from None
    if not isinstance(data, dict):
        raise ProveAIError(f"{file}: not a calibration file (expected a JSON object)")
    return CalibrationReport.from_dict(data, str(file))


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)



def embedding_grade(
    embedder: Embedder, old_text: str, new_text: str, thresholds: tuple[float, float], unified: str = ""
) -> Grade | None:
    """The tier-2 grade when the cosine similarity decides, else None.

    Above the unchanged threshold -> unchanged; below the regressed one -> regressed (its
    confidence the distance); in between, or when the vectors cannot be compared (cross-model
    vectors, an unreachable embedder), None: the judge decides. `unified` is the two texts' diff.
    """
    unchanged_at, regressed_at = thresholds
    try:
        similarity = cosine_similarity(embedder.embed(old_text), embedder.embed(new_text))
    except (ValueError, ProviderError):
        return None
    if similarity > unchanged_at:
        rationale = f"embedding cosine {similarity:.3f} > {unchanged_at:.2f}"
        return Grade(Status.UNCHANGED, Tier.TIER2, rationale, unified, similarity)
    if similarity < regressed_at:
        rationale = f"embedding cosine {similarity:.3f} < {regressed_at:.2f} (diverged)"
        return Grade(Status.REGRESSED, Tier.TIER2, rationale, unified, 1.0 - similarity)
    return None


def thresholds_from_similarities(similarities: list[float], n_outputs: int) -> AgentThresholds:
    """The documented rule (module docstring) applied to one agent's pairwise similarities."""
    q05, q95 = _quantile(similarities, 0.05), _quantile(similarities, 0.95)
    regressed = min(0.90, max(0.05, q05 - 0.05))
    unchanged = min(0.999, max(DEFAULT_UNCHANGED, q95 + (1 - q95) / 2))
    return AgentThresholds(unchanged, regressed, n_outputs, len(similarities), q05, q95)


def calibrate(
    traces: Iterable[Trace], embedder: Embedder | BatchEmbedder, max_outputs_per_agent: int = 200
) -> CalibrationReport:
    """Thresholds for every agent with two or more distinct outputs across `traces`."""
    outputs: dict[str, list[str]] = {}
    for trace in traces:
        for span in trace.spans:
            if span.status != "ok" or span.output is None:
                continue
            texts = outputs.setdefault(span.name, [])
            text = value_as_text(span.output, lines=True)
            if text not in texts and len(texts) < max_outputs_per_agent:
                texts.append(text)
    agents: dict[str, AgentThresholds] = {}
    for name, texts in outputs.items():
        if len(texts) < 2:
            continue
        vectors = (
            embedder.embed_many(texts)
            if hasattr(embedder, "embed_many")
            else [embedder.embed(t) for t in texts]
        )
        sims = [cosine_similarity(a, b) for a, b in combinations(vectors, 2)]
        agents[name] = thresholds_from_similarities(sims, len(texts))
    created = utc_now_iso()
    return CalibrationReport(str(embedder.model), str(getattr(embedder, "version", "")), created, agents)
