"""Tier 2: embedding similarity decides obvious divergence before the judge; the calibrated
per-agent thresholds (proveai.calibration.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proveai.cache import ResponseCache
from proveai.diff.grading import grade_outputs
from proveai.diff.tier2 import (
    CalibrationReport,
    calibrate,
    load_calibration,
    thresholds_from_similarities,
)
from proveai.diff.verdict import Status, Tier
from proveai.providers import OpenAICompatibleProvider
from proveai.providers.embedding import (
    EmbeddingResult,
    LocalEmbeddingAdapter,
)
from tests.proveai.model_server import ModelServer
from tests.proveai.trace_kit import closed, span


def test_tier2_decides_obvious_divergence_without_the_judge(
    local_embedder: LocalEmbeddingAdapter, model_server: ModelServer
) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    verdict = grade_outputs(
        "Your parcel ships tomorrow by courier.",
        "Quarterly bond yields fell sharply.",
        embedder=local_embedder,
        judge_model="j",
        judge_provider=provider,
        cache=ResponseCache(enabled=False),
    )
    assert (verdict.status, verdict.tier) == (Status.REGRESSED, Tier.TIER2) and "cosine" in verdict.rationale
    assert model_server.count() == 0
    close = grade_outputs(
        "Your parcel ships tomorrow.",
        "Your parcel will ship tomorrow.",
        embedder=local_embedder,
        judge_model="j",
        judge_provider=provider,
        cache=ResponseCache(enabled=False),
    )
    assert close.tier == Tier.JUDGE and model_server.count() == 1  # the uncertain band goes to the judge


def test_calibration_rule_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = thresholds_from_similarities([0.30, 0.50, 0.70, 0.90], 4)
    assert t.regressed_threshold == pytest.approx(0.30 + 0.2 * 0.15 - 0.05)
    assert t.unchanged_threshold == 0.99
    tight = thresholds_from_similarities([0.996, 0.998], 2)
    q95 = 0.996 + 0.95 * 0.002
    assert tight.unchanged_threshold == pytest.approx(q95 + (1 - q95) / 2)

    class Embedder:
        model, version = "toy", "1"

        def embed_many(self, texts):

            return [EmbeddingResult((1.0, float(len(t))), "toy", "1") for t in texts]

    traces = [closed(span("1", "writer", "x" * n, 0, 1), trace_id=f"{n:032x}") for n in (1, 2, 3)]
    report = calibrate(traces, Embedder())
    assert set(report.agents) == {"writer"} and report.agents["writer"].n_pairs == 3
    monkeypatch.chdir(tmp_path)
    report.write("proveai.calibration.json")
    loaded = load_calibration()
    assert loaded is not None
    assert loaded.thresholds_for("writer", "toy") == pytest.approx(report.thresholds_for("writer"), abs=1e-4)
    assert loaded.thresholds_for("writer", "other-model") == (0.99, 0.40)
    Path("proveai.calibration.json").write_text(json.dumps({"agents": []}))
    from proveai.errors import ProveAIError

    with pytest.raises(ProveAIError, match="not a calibration file"):
        load_calibration()
    assert isinstance(CalibrationReport("m", "v", "c").thresholds_for("x"), tuple)
