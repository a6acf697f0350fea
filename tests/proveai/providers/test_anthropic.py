"""The Anthropic provider over real HTTP to the fake model server on 127.0.0.1."""

from __future__ import annotations

import pytest

from proveai.providers import AnthropicProvider, ProviderError, dispatch
from tests.proveai.model_server import ModelServer
from tests.proveai.providers.messages_kit import MESSAGES


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
