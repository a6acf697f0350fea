"""Providers and the registry, over real HTTP to the fake model server on 127.0.0.1."""

from __future__ import annotations

import pytest

from proveai.providers import (
    AnthropicProvider,
    OpenAICompatibleProvider,
    ProviderError,
    dispatch,
    register_provider,
    reset_providers,
)
from proveai.providers.registry import env_key_names
from tests.proveai.model_server import ModelServer, Reply, deterministic_answer

MESSAGES = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Classify: broken order"}]


def test_openai_compatible_call_sends_the_request_and_reads_text_and_usage(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(api_key="sk-test-secret", base_url=model_server.openai_url)
    response = provider.call(MESSAGES, "gpt-4o-mini", temperature=0, seed=7)
    (request,) = model_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {"model": "gpt-4o-mini", "messages": MESSAGES, "temperature": 0, "seed": 7}
    assert request.headers["authorization"] == "Bearer sk-test-secret"
    assert response.text == deterministic_answer("gpt-4o-mini", MESSAGES, {"temperature": 0, "seed": 7})
    assert response.messages == ({"role": "assistant", "content": response.text},)
    assert response.usage["input_tokens"] > 0 and response.usage["output_tokens"] > 0
    assert response.raw["object"] == "chat.completion"


def test_a_local_endpoint_needs_no_key(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    provider.call(MESSAGES, "llama-3")
    assert "authorization" not in model_server.requests[0].headers


def test_anthropic_moves_system_to_the_top_level_and_sends_its_headers(model_server: ModelServer) -> None:
    provider = AnthropicProvider(api_key="ak-secret", base_url=model_server.anthropic_url)
    response = provider.call(MESSAGES, "claude-haiku-4-5")
    (request,) = model_server.requests
    assert request.path == "/v1/messages"
    assert request.body["system"] == "Be terse."
    assert request.body["messages"] == [MESSAGES[1]]
    assert request.body["max_tokens"] == 1024
    assert request.headers["x-api-key"] == "ak-secret"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert response.text.startswith("Answer: ")
    assert set(response.usage) == {"input_tokens", "output_tokens"}


def test_missing_anthropic_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderError) as info:
        dispatch("claude-haiku-4-5").call(MESSAGES, "claude-haiku-4-5")
    assert "ANTHROPIC_API_KEY" in str(info.value) and "claude-haiku-4-5" in str(info.value)
    assert info.value.reason == "ANTHROPIC_API_KEY not set"


def test_429_with_retry_after_is_retried(model_server: ModelServer) -> None:
    model_server.enqueue(Reply(status=429, headers={"Retry-After": "0"}), Reply(status=503))
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, backoff_s=0.01)
    response = provider.call(MESSAGES, "m")
    assert model_server.count("/v1/chat/completions") == 3
    assert response.text.startswith("Answer: ")


def test_persistent_5xx_fails_naming_model_and_endpoint_never_the_key(model_server: ModelServer) -> None:
    model_server.enqueue(*[Reply(status=500) for _ in range(3)])
    provider = OpenAICompatibleProvider(
        api_key="sk-very-secret", base_url=model_server.openai_url, max_retries=2, backoff_s=0.01
    )
    with pytest.raises(ProviderError) as info:
        provider.call(MESSAGES, "my-model")
    text = str(info.value)
    assert "'my-model'" in text and model_server.openai_url in text and "HTTP 500" in text
    assert "sk-very-secret" not in text
    assert model_server.count() == 3


def test_401_is_not_retried_and_says_what_to_check(model_server: ModelServer) -> None:
    model_server.enqueue(Reply(status=401, body={"error": "bad key"}))
    provider = OpenAICompatibleProvider(api_key="sk-wrong", base_url=model_server.openai_url)
    with pytest.raises(ProviderError) as info:
        provider.call(MESSAGES, "m")
    assert model_server.count() == 1
    assert "OPENAI_API_KEY" in " ".join(info.value.suggestions)
    assert "sk-wrong" not in str(info.value)


@pytest.mark.parametrize(
    "body", ["not json at all", {"choices": []}, {"choices": [{"message": {"content": 5}}]}]
)
def test_malformed_replies_are_clean_errors(model_server: ModelServer, body) -> None:
    model_server.enqueue(Reply(status=200, body=body))
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    with pytest.raises(ProviderError, match=r"malformed|not a JSON object"):
        provider.call(MESSAGES, "m")


def test_slow_reply_times_out(model_server: ModelServer) -> None:
    model_server.enqueue(Reply(delay_s=1.0, text="late"))
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, timeout=0.2, max_retries=0)
    with pytest.raises(ProviderError, match=r"timed out after 0\.2s"):
        provider.call(MESSAGES, "m")


def test_builtin_patterns_and_unknown_model() -> None:
    assert isinstance(dispatch("gpt-4o-mini"), OpenAICompatibleProvider)
    assert isinstance(dispatch("o3-mini"), OpenAICompatibleProvider)
    assert isinstance(dispatch("claude-haiku-4-5"), AnthropicProvider)
    expected = r"No provider registered for model 'llama-3'.*PROVEAI_PROVIDER_PATTERN"
    with pytest.raises(ValueError, match=expected):
        dispatch("llama-3")


def test_env_registration_overrides_builtins_and_uses_the_key_chain(
    model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "accounts/fireworks/models/*, gpt-*")
    monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", model_server.openai_url)
    monkeypatch.setenv("TOGETHER_API_KEY", "together-key")
    reset_providers()
    provider = dispatch("gpt-4o-mini")
    assert provider is dispatch("accounts/fireworks/models/deepseek-v3p1")
    provider.call(MESSAGES, "gpt-4o-mini")
    assert model_server.requests[0].headers["authorization"] == "Bearer together-key"
    monkeypatch.setenv("PROVEAI_PROVIDER_API_KEY", "explicit-key")
    provider.call(MESSAGES, "gpt-4o-mini", seed=1)
    assert model_server.requests[1].headers["authorization"] == "Bearer explicit-key"
    assert isinstance(dispatch("claude-x"), AnthropicProvider)


def test_key_chain_prefers_the_vendor_of_the_host() -> None:
    fireworks = env_key_names("https://api.fireworks.ai/inference/v1")
    assert fireworks == ("PROVEAI_PROVIDER_API_KEY", "FIREWORKS_API_KEY")
    assert env_key_names("https://openrouter.ai/api/v1")[1] == "OPENROUTER_API_KEY"
    assert env_key_names("http://localhost:11434/v1")[1:4] == (
        "FIREWORKS_API_KEY", "TOGETHER_API_KEY", "OPENROUTER_API_KEY"
    )


def test_pattern_without_base_url_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "deepseek-*")
    reset_providers()
    with pytest.raises(ProviderError, match="PROVEAI_PROVIDER_BASE_URL is not set"):
        dispatch("deepseek-v3").call(MESSAGES, "deepseek-v3")


def test_user_registration_wins_and_reset_drops_it(model_server: ModelServer) -> None:
    first = OpenAICompatibleProvider(base_url=model_server.openai_url)
    second = OpenAICompatibleProvider(base_url=model_server.openai_url + "/")
    register_provider("llama-*", first)
    register_provider("llama-3*", second)
    assert dispatch("llama-3-8b") is second
    assert dispatch("llama-2") is first
    reset_providers()
    with pytest.raises(ValueError):
        dispatch("llama-2")
    with pytest.raises(TypeError):
        register_provider("x-*", object())


def test_snapshot_and_restore_put_user_registrations_back_exactly(model_server: ModelServer) -> None:
    from proveai.providers.registry import restore_registry, snapshot_registry

    kept = OpenAICompatibleProvider(base_url=model_server.openai_url)
    register_provider("llama-*", kept)
    saved = snapshot_registry()
    register_provider("llama-*", OpenAICompatibleProvider(base_url=model_server.openai_url + "/"))
    register_provider("mistral-*", kept)
    assert dispatch("llama-2") is not kept
    restore_registry(saved)
    assert dispatch("llama-2") is kept
    with pytest.raises(ValueError):
        dispatch("mistral-7b")
    assert dispatch("gpt-4o").provider_id.startswith("openai")  # built-ins untouched
    with pytest.raises(TypeError):
        restore_registry([])  # type: ignore[arg-type]


def test_each_provider_owns_one_pool_and_closes_it(model_server: ModelServer) -> None:
    import gc

    with OpenAICompatibleProvider(base_url=model_server.openai_url) as provider:
        provider.call(MESSAGES, "m")
        pool = provider.http_client()
        provider.call(MESSAGES, "m")
        assert provider.http_client() is pool and not pool.is_closed
    assert pool.is_closed
    provider.call(MESSAGES, "m")  # usable again: a fresh pool
    assert provider.http_client() is not pool
    again = provider.http_client()
    del provider
    gc.collect()
    assert again.is_closed  # collected with its provider, no socket left behind


def test_a_monitored_agent_records_the_request_it_sent(model_server: ModelServer) -> None:
    from proveai import monitor, trace

    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)

    @monitor("classify", model="gpt-4o-mini")
    def classify(ticket: str) -> str:
        system = "Classify the ticket into one word."
        messages = [{"role": "system", "content": system}, {"role": "user", "content": ticket}]
        return provider.call(messages, "gpt-4o-mini", temperature=0).text

    with trace("svc") as t:
        out = classify("My order arrived broken")
    (span,) = t.spans
    assert span.prompt == "Classify the ticket into one word."
    assert span.input_messages[1] == {"role": "user", "content": "My order arrived broken"}
    assert span.output_messages == [{"role": "assistant", "content": out}]
    assert span.usage["output_tokens"] > 0
    assert span.request["temperature"] == 0


def test_retry_after_is_honoured_in_seconds_or_as_a_date(model_server: ModelServer, monkeypatch) -> None:
    import email.utils
    import time

    from proveai.providers import _http

    assert _http.retry_after_seconds("2.5") == 2.5
    assert _http.retry_after_seconds("7200") == _http.MAX_RETRY_AFTER_S
    assert _http.retry_after_seconds("soon") is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= _http.retry_after_seconds(future) <= 30
    waits: list[float] = []
    monkeypatch.setattr(_http.time, "sleep", waits.append)
    model_server.enqueue(Reply(status=429, headers={"Retry-After": "1.5"}), Reply(status=502))
    provider = AnthropicProvider(api_key="k", base_url=model_server.anthropic_url, backoff_s=0.25)
    provider.call(MESSAGES, "claude-haiku-4-5")
    assert waits[0] == 1.5  # the server's value, not our backoff
    assert 0.5 <= waits[1] <= 0.5 * 1.25  # second attempt, no Retry-After: 0.25 * 2**1 plus jitter
    assert model_server.count("/v1/messages") == 3
