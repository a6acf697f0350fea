"""The built-in checks (regex, JSON, schema, contract, tool, length) and LLMJudge over real HTTP."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from proveai import (
    LLMJudge,
    assert_json,
    contract_conformance,
    monitor,
    not_contains,
    output_length,
    regex_match,
    schema_match,
    tool_called,
    trace,
)
from tests.proveai.capture.checks_kit import labels, run
from tests.proveai.model_server import ModelServer


@monitor("crm_lookup", kind="TOOL")
def crm_lookup(category: str) -> dict:
    return {"category": category}


class Category(BaseModel):
    category: str
    confidence: float


def test_output_checks_good_and_bad_with_reasons():
    good = run('{"category": "billing", "confidence": 0.9} [3]', [regex_match("classify", r"\[\d+\]")])
    assert labels(good) == {"regex_match": "good"}
    t = run(
        '{"category": 5}',
        [
            assert_json("classify"),
            schema_match("classify", {"type": "object", "properties": {"category": {"type": "string"}}}),
            contract_conformance("classify", Category),
            regex_match("classify", r"\[\d+\]"),
            output_length("classify", min_chars=50),
            output_length("classify", max_chars=5, name="short"),
            not_contains("classify", "category"),
            tool_called("crm_lookup"),
        ],
    )
    assert [(r.name, r.label) for r in t.check_results] == [
        ("json_valid", "good"), ("schema_match", "bad"), ("contract_conformance", "bad"),
        ("regex_match", "bad"), ("output_length", "bad"), ("short", "bad"), ("not_contains", "bad"),
        ("tool_called", "bad"),
    ]
    reasons = {r.name: r.reason for r in t.check_results}
    assert reasons["schema_match"] == "classify output at category: 5 is not of type 'string'"
    assert "Category at category" in reasons["contract_conformance"]
    assert reasons["output_length"] == "classify output has 15 chars, fewer than 50"
    assert reasons["tool_called"] == "tool 'crm_lookup' was not called"
    assert t.outcome == "bad"
    assert all(r.agent in ("classify", "crm_lookup") for r in t.check_results)


def test_json_check_fails_on_text_and_skips_missing_agents():
    t = run("not json", [assert_json("classify"), assert_json("absent", name="absent_json")])
    results = {r.name: r for r in t.check_results}
    assert results["json_valid"].label == "bad" and "not JSON" in results["json_valid"].reason
    assert results["absent_json"].label == "skip"
    assert results["absent_json"].reason == "agent 'absent' did not run in this trace"


def test_tool_called_good_when_the_tool_ran():
    with trace(checks=[tool_called("crm_lookup")]) as t:
        crm_lookup("billing")
    assert t.check_results[0].label == "good" and t.outcome == "good"


def test_check_construction_errors_are_immediate():
    with pytest.raises(ValueError, match="max_chars 1 is below min_chars 5"):
        output_length("a", min_chars=5, max_chars=1)
    with pytest.raises(Exception, match=r"is not valid under any of the given schemas|is not of type"):
        schema_match("a", {"type": 12})
    with pytest.raises(TypeError, match="pydantic model"):
        contract_conformance("a", dict)


def test_llm_judge_skips_without_a_provider(monkeypatch, tmp_path):
    for name in ("ANTHROPIC_API_KEY", "PROVEAI_JUDGE_MODEL", "PROVEAI_PROVIDER_PATTERN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROVEAI_CACHE_DIR", str(tmp_path / "cache"))
    t = run("draft", [LLMJudge("classify", "must be polite", model="no-such-model-xyz")])
    result = t.check_results[0]
    assert result.label == "skip"
    assert result.reason.startswith("judge skip: no provider for judge model 'no-such-model-xyz'")
    assert result.score is None
    t = run("draft", [LLMJudge("classify", "must be polite")])  # claude-haiku-4-5, no key
    assert t.check_results[0].label == "skip"
    assert t.check_results[0].reason == "judge skip: ANTHROPIC_API_KEY not set"


@pytest.mark.parametrize(("verdict", "label"), [("equivalent", "good"), ("worse", "bad"), ("better", "good")])
def test_llm_judge_grades_through_a_real_http_model(monkeypatch, tmp_path, verdict, label):
    from proveai import OpenAICompatibleProvider, register_provider
    from proveai.providers import reset_providers

    monkeypatch.setenv("PROVEAI_CACHE_DIR", str(tmp_path / "cache"))
    with ModelServer(judge_verdict=verdict) as server:
        register_provider("local-judge*", OpenAICompatibleProvider(api_key="k", base_url=server.openai_url))
        try:
            judge = LLMJudge("classify", "must be polite", model="local-judge-1")
            t = run("Thanks for reaching out!", [judge])
        finally:
            reset_providers()
        assert server.count("/v1/chat/completions") == 1
        sent = json.dumps(server.chat_requests()[0].body)
    result = t.check_results[0]
    assert (result.name, result.label, result.agent) == ("llm_judge", label, "classify")
    assert result.score == {"good": 1.0, "bad": 0.0}[label]
    assert result.reason == "judge: the outputs say the same thing"
    assert "must be polite" in sent and "Thanks for reaching out!" in sent


def test_llm_judge_trigger_skips_the_call(monkeypatch, tmp_path):
    from proveai import OpenAICompatibleProvider, register_provider
    from proveai.providers import reset_providers

    monkeypatch.setenv("PROVEAI_CACHE_DIR", str(tmp_path / "cache"))
    with ModelServer() as server:
        register_provider("local-judge*", OpenAICompatibleProvider(api_key="k", base_url=server.openai_url))
        try:
            judge = LLMJudge(
                "classify", "polite", model="local-judge-1", trigger=lambda t: t.passed("json_valid")
            )
            t = run("not json", [assert_json("classify"), judge])
        finally:
            reset_providers()
        assert server.count() == 0
    assert labels(t) == {"json_valid": "bad", "llm_judge": "skip"}
