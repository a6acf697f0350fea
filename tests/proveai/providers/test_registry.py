"""The provider registry: built-in patterns, environment registrations, key chain, snapshot/restore."""

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
from tests.proveai.model_server import ModelServer
from tests.proveai.providers.messages_kit import MESSAGES


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
