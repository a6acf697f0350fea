"""engine/model.py: what the engine returns, as plain dataclasses that travel as JSON. A real
engine's answer read back with from_dict gives the same JSON with to_dict; unknown keys (a newer
engine's) are ignored; severity ranks and filtering follow the documented order."""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest

from proveai.engine.model import (
    LAYERS,
    SEVERITIES,
    AnalyzeResponse,
    Diagnosis,
    LayerResult,
    PropagationLink,
    severity_rank,
)
from proveai.traces.otlp import encode_trace
from tests.proveai.engine import pipelines


def diagnosis(agent: str, severity: str, confidence: float) -> Diagnosis:
    return Diagnosis(agent, "errors", "raised", severity, confidence, ("FM-1.1",), f"{agent} raised")


def link(agent: str, severity: str, confidence: float, role: str = "root_cause") -> PropagationLink:
    hints = {"FM-1.1": "fix"}
    return PropagationLink(agent, role, None, agent, severity, confidence, ("FM-1.1",), ("e",), hints)


def test_severities_rank_critical_first_and_unknown_last() -> None:
    assert SEVERITIES == ("critical", "high", "medium", "low")
    assert [severity_rank(s) for s in SEVERITIES] == [4, 3, 2, 1]
    assert severity_rank("catastrophic") == 0
    assert LAYERS == ("checks", "errors", "loops", "path", "judge", "propagation")


def test_a_real_engine_answer_reads_back_to_the_same_json(engine) -> None:
    body = encode_trace(pipelines.run("exception", seed=3))
    headers = {"X-Prove-Run-Id": "run-1", "X-Prove-Customer-Id": "acme", "X-Prove-Mas-Name": "research"}
    reply = httpx.post(f"{engine.url}/ingest/traces", json=body, headers=headers, timeout=60)
    (answer,) = reply.json()["results"]
    response = AnalyzeResponse.from_dict(answer)
    assert response.to_dict() == answer
    assert json.loads(json.dumps(response.to_dict())) == answer
    assert response.detected and response.num_diagnoses == len(answer["diagnoses"]) > 0
    assert all(isinstance(d, Diagnosis) and isinstance(d.failure_modes, tuple) for d in response.diagnoses)
    assert [layer.name for layer in response.layers] == list(LAYERS)
    assert all(isinstance(layer, LayerResult) for layer in response.layers)
    (root,) = response.root_causes
    assert root.agent_name == "researcher" and response.remediation == root.remediation
    assert (response.run_id, response.customer_id, response.mas_name) == ("run-1", "acme", "research")


def test_from_dict_ignores_keys_it_does_not_know_and_fills_what_is_missing() -> None:
    data = diagnosis("a", "high", 0.9).to_dict()
    assert data["failure_modes"] == ["FM-1.1"]  # a list in JSON, a tuple in Python
    assert Diagnosis.from_dict({**data, "added_by_a_newer_engine": 1}) == diagnosis("a", "high", 0.9)
    assert PropagationLink.from_dict({**link("a", "low", 1.0).to_dict(), "x": 2}) == link("a", "low", 1.0)
    layer = {"layer": 1, "name": "checks", "status": "clean", "summary": "ok", "x": 0}
    assert LayerResult.from_dict(layer) == LayerResult(1, "checks", "clean", "ok")
    flagged = AnalyzeResponse.from_dict({"trace_id": "t", "detected": True})
    suspect = AnalyzeResponse.from_dict({"trace_id": "t", "detected": False}, events=({"name": "checks"},))
    assert (flagged.status, suspect.status) == ("flagged", "suspect")  # an engine that sent no status
    assert flagged.diagnoses == () and flagged.remediation == {} and flagged.root_causes == []
    assert suspect.events == ({"name": "checks"},)
    assert "events" not in suspect.to_dict()  # the stream's events stay with the client


def test_filtered_keeps_what_is_at_least_as_severe_and_as_confident() -> None:
    response = AnalyzeResponse(
        trace_id="t", detected=True, status="flagged",
        diagnoses=(
            diagnosis("a", "critical", 0.4), diagnosis("b", "medium", 0.9), diagnosis("c", "low", 1.0),
        ),
        propagation=(link("a", "critical", 0.4), link("b", "medium", 0.9, "propagated")),
    )
    high = response.filtered("high", 0.0)
    assert [d.agent_name for d in high.diagnoses] == ["a"]
    assert [p.agent_name for p in high.propagation] == ["a"]
    confident = response.filtered(None, 0.5)
    assert [d.agent_name for d in confident.diagnoses] == ["b", "c"]
    assert [p.agent_name for p in confident.propagation] == ["b"]
    assert response.filtered(None, 0.0) == response
    assert dataclasses.replace(response.filtered("medium", 0.5), diagnoses=()).num_diagnoses == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        response.detected = False  # type: ignore[misc]
