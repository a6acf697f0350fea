"""The shared HTTP endpoint: retries, Retry-After, timeouts, errors and its connection pool."""

from __future__ import annotations

import pytest

from proveai.providers import AnthropicProvider, OpenAICompatibleProvider, ProviderError
from tests.proveai.model_server import ModelServer, Reply
from tests.proveai.providers.messages_kit import MESSAGES


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


def test_slow_reply_times_out(model_server: ModelServer) -> None:
    model_server.enqueue(Reply(delay_s=1.0, text="late"))
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, timeout=0.2, max_retries=0)
    with pytest.raises(ProviderError, match=r"timed out after 0\.2s"):
        provider.call(MESSAGES, "m")


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
