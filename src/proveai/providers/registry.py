"""Which provider serves which model: glob patterns, first match wins, in priority order.

Priority (highest first): patterns registered with `register_provider` (the most recent call
first), then the env-driven patterns (PROVEAI_PROVIDER_PATTERN), then the built-in defaults
(gpt-*, o1-*, o3-*, o4-* -> OpenAI; claude-* -> Anthropic). The env is read on import and on
every `reset_providers()`.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from proveai.providers.anthropic import AnthropicProvider
from proveai.providers.base import Message, Provider, ProviderError, ProviderResponse
from proveai.providers.openai import OpenAICompatibleProvider

BUILTIN_OPENAI_PATTERNS = ("gpt-*", "o1-*", "o3-*", "o4-*", "o1", "o3", "o4-mini")
BUILTIN_ANTHROPIC_PATTERNS = ("claude-*",)

# API-key variables tried for PROVEAI_PROVIDER_BASE_URL: the explicit one, then the vendor
# whose host the base URL names, then (no host match) the generic chain in this order.
KEY_BY_HOST = (
    ("fireworks.ai", "FIREWORKS_API_KEY"),
    ("together.xyz", "TOGETHER_API_KEY"),
    ("together.ai", "TOGETHER_API_KEY"),
    ("openrouter.ai", "OPENROUTER_API_KEY"),
    ("groq.com", "GROQ_API_KEY"),
    ("deepseek.com", "DEEPSEEK_API_KEY"),
    ("mistral.ai", "MISTRAL_API_KEY"),
    ("anyscale.com", "ANYSCALE_API_KEY"),
    ("deepinfra.com", "DEEPINFRA_API_KEY"),
    ("openai.com", "OPENAI_API_KEY"),
)
KEY_FALLBACK_CHAIN = (
    "FIREWORKS_API_KEY",
    "TOGETHER_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "ANYSCALE_API_KEY",
    "DEEPINFRA_API_KEY",
)


@dataclass(frozen=True)
class Registration:
    pattern: str
    provider: Provider
    source: str  # "user" | "env" | "builtin"


_lock = threading.Lock()
_user: list[Registration] = []
_env: list[Registration] = []
_builtin: list[Registration] = []


def env_key_names(base_url: str) -> tuple[str, ...]:
    """The API-key variables consulted, in order, for an env-registered endpoint."""
    host = (urlparse(base_url).hostname or "").lower()
    matched = tuple(name for suffix, name in KEY_BY_HOST if host == suffix or host.endswith("." + suffix))
    rest = () if matched else KEY_FALLBACK_CHAIN
    return ("PROVEAI_PROVIDER_API_KEY", *matched, *rest)


def _env_registrations() -> list[Registration]:
    patterns = [p.strip() for p in os.environ.get("PROVEAI_PROVIDER_PATTERN", "").split(",") if p.strip()]
    if not patterns:
        return []
    base_url = os.environ.get("PROVEAI_PROVIDER_BASE_URL", "").strip()
    if base_url:
        provider: Provider = OpenAICompatibleProvider(
            base_url=base_url, api_key_env=env_key_names(base_url), base_url_env=None, patterns=patterns
        )
    else:
        provider = _MissingBaseUrl(patterns)
    return [Registration(p, provider, "env") for p in patterns]


def _builtin_registrations() -> list[Registration]:
    openai = OpenAICompatibleProvider(patterns=BUILTIN_OPENAI_PATTERNS)
    anthropic = AnthropicProvider(patterns=BUILTIN_ANTHROPIC_PATTERNS)
    return [Registration(p, openai, "builtin") for p in BUILTIN_OPENAI_PATTERNS] + [
        Registration(p, anthropic, "builtin") for p in BUILTIN_ANTHROPIC_PATTERNS
    ]


def register_provider(pattern: str, provider: Provider) -> None:
    """Route models matching the glob `pattern` to `provider`; wins over earlier registrations."""
    if not callable(getattr(provider, "call", None)):
        raise TypeError(f"provider for {pattern!r} has no call(messages, model, **kwargs) method")
    with _lock:
        _user.insert(0, Registration(pattern, provider, "user"))


def reset_providers() -> None:
    """Drop user registrations and re-read the PROVEAI_PROVIDER_* environment."""
    with _lock:
        _user.clear()
        _env[:] = _env_registrations()
        _builtin[:] = _builtin_registrations()


@dataclass(frozen=True)
class RegistrySnapshot:
    """An opaque copy of the user registrations, for `restore_registry`."""

    user: tuple[Registration, ...]


def snapshot_registry() -> RegistrySnapshot:
    """The user registrations as they are now (env and built-ins are not user state)."""
    with _lock:
        return RegistrySnapshot(tuple(_user))


def restore_registry(snapshot: RegistrySnapshot) -> None:
    """Put the user registrations back exactly as `snapshot_registry` saw them."""
    if not isinstance(snapshot, RegistrySnapshot):
        raise TypeError("restore_registry takes the value returned by snapshot_registry()")
    with _lock:
        _user[:] = list(snapshot.user)


def registrations() -> list[Registration]:
    """Every registration in the order dispatch tries them."""
    with _lock:
        return [*_user, *_env, *_builtin]


def dispatch(model: str) -> Provider:
    """The provider for `model`: the first registration whose pattern matches, as registered.

    `proveai.dispatch` (proveai.cache.dispatch_cached) adds the verify-time response cache on
    top of this lookup.
    """
    for registration in registrations():
        if fnmatch.fnmatchcase(model, registration.pattern):
            return registration.provider
    raise ValueError(
        f"No provider registered for model {model!r}. Set PROVEAI_PROVIDER_PATTERN (e.g. {model}) and "
        "PROVEAI_PROVIDER_BASE_URL (plus PROVEAI_PROVIDER_API_KEY if the endpoint needs one), "
        "or call proveai.register_provider(pattern, provider)."
    )


class _MissingBaseUrl:
    """Stands in for an env registration whose base URL is missing, so the call says so."""

    provider_id = "env:missing-base-url"

    def __init__(self, patterns: list[str]) -> None:
        self.patterns = patterns

    def supports(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model, p) for p in self.patterns)

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse:
        raise ProviderError(
            f"model {model!r} matches PROVEAI_PROVIDER_PATTERN but PROVEAI_PROVIDER_BASE_URL is not set",
            reason="PROVEAI_PROVIDER_BASE_URL not set",
            suggestions=("export PROVEAI_PROVIDER_BASE_URL=https://.../v1",),
        )


reset_providers()
