"""The provider layer: the Provider protocol, HTTP providers and the model -> provider registry."""

from __future__ import annotations

from proveai.providers.anthropic import AnthropicProvider
from proveai.providers.base import Provider, ProviderError, ProviderResponse
from proveai.providers.openai import OpenAICompatibleProvider
from proveai.providers.registry import (
    dispatch,
    register_provider,
    registrations,
    reset_providers,
    restore_registry,
    snapshot_registry,
)

__all__ = [
    "AnthropicProvider",
    "OpenAICompatibleProvider",
    "Provider",
    "ProviderError",
    "ProviderResponse",
    "dispatch",
    "register_provider",
    "registrations",
    "reset_providers",
    "restore_registry",
    "snapshot_registry",
]
