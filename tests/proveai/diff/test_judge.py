"""Tier 3: the LLM judge over HTTP (parsing, caching, degrading to skip, configuration)."""

from __future__ import annotations

import pytest

from proveai.cache import ResponseCache
from proveai.diff.judge import llm_judge
from proveai.providers import OpenAICompatibleProvider
from tests.proveai.model_server import ModelServer, Reply


def test_judge_parses_fenced_json_and_is_cached(model_server: ModelServer, tmp_path) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    cache = ResponseCache(root=tmp_path / "c")
    messages = [{"role": "user", "content": "Summarise"}]
    first = llm_judge(messages, "old text", "new text", model="judge-1", provider=provider, cache=cache)
    assert first == {
        "verdict": "equivalent",
        "confidence": 0.9,
        "rationale": "the outputs say the same thing",
    }
    again = llm_judge(messages, "old text", "new text", model="judge-1", provider=provider, cache=cache)
    assert again == first and model_server.count() == 1
    body = model_server.requests[0].body
    assert body["model"] == "judge-1" and body["temperature"] == 0
    assert "OLD OUTPUT:\nold text" in body["messages"][1]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="I think they are about the same."),
        Reply(text='{"verdict": "maybe", "confidence": 1}'),
        Reply(status=500),
        Reply(status=200, body={"choices": []}),
    ],
)
def test_judge_degrades_to_skip(model_server: ModelServer, reply: Reply) -> None:
    model_server.enqueue(*[reply] * 4)
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
    result = llm_judge([], "a", "b", model="j", provider=provider, cache=ResponseCache(enabled=False))
    assert result["verdict"] == "skip" and result["confidence"] == 0.0
    assert result["rationale"].startswith("judge skip: ")


def test_judge_without_credentials_says_what_to_set(monkeypatch) -> None:
    result = llm_judge([], "a", "b", cache=ResponseCache(enabled=False))
    assert result == {
        "verdict": "skip",
        "confidence": 0.0,
        "rationale": "judge skip: ANTHROPIC_API_KEY not set",
    }
    monkeypatch.setenv("PROVEAI_JUDGE_MODEL", "llama-unknown")
    result = llm_judge([], "a", "b", cache=ResponseCache(enabled=False))
    assert "no provider for judge model 'llama-unknown'" in result["rationale"]


def test_judge_model_env_is_read_at_call_time(model_server: ModelServer, monkeypatch) -> None:
    from proveai.providers import reset_providers

    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "acme-*")
    monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", model_server.openai_url)
    reset_providers()
    monkeypatch.setenv("PROVEAI_JUDGE_MODEL", "acme-judge")
    result = llm_judge([], "a", "b", cache=ResponseCache(enabled=False))
    assert result["verdict"] == "equivalent" and model_server.requests[0].body["model"] == "acme-judge"


def test_a_malformed_judge_reply_is_not_served_from_cache_again(model_server: ModelServer, tmp_path) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    cache = ResponseCache(root=tmp_path / "c")
    # a malformed reply is asked again once (PROVEAI_JUDGE_RETRIES, default 1), then skipped
    model_server.enqueue(Reply(text="no json here"), Reply(text="still no json"))
    skipped = llm_judge([], "a", "b", model="j", provider=provider, cache=cache)
    assert skipped["verdict"] == "skip" and "2 attempt(s), max_tokens 200" in skipped["rationale"]
    assert [r.body["max_tokens"] for r in model_server.requests] == [200, 200]
    assert llm_judge([], "a", "b", model="j", provider=provider, cache=cache)["verdict"] == "equivalent"
    assert model_server.count() == 3
    model_server.enqueue(Reply(text="rambling"))
    assert llm_judge([], "a", "c", model="j", provider=provider, cache=cache)["verdict"] == "equivalent"
    assert model_server.count() == 5  # one malformed reply, one retry that parsed
