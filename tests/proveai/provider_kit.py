"""Provider fixtures: a real fake-model server on 127.0.0.1, a clean provider registry and cache.

tests/proveai/conftest.py turns `clean_providers` on for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.proveai.model_server import ModelServer

PROVIDER_ENV = (
    "PROVEAI_PROVIDER_PATTERN", "PROVEAI_PROVIDER_BASE_URL", "PROVEAI_PROVIDER_API_KEY",
    "PROVEAI_JUDGE_MODEL", "PROVEAI_NO_CACHE", "PROVEAI_CACHE_DIR", "OPENAI_API_KEY",
    "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "FIREWORKS_API_KEY",
    "TOGETHER_API_KEY", "OPENROUTER_API_KEY", "PROVEAI_EMBEDDER_MODEL", "PROVEAI_EMBEDDER_BASE_URL",
    "PROVEAI_EMBEDDER_API_KEY",
)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer(mode="deterministic") as server:
        yield server


@pytest.fixture
def clean_providers(monkeypatch: pytest.MonkeyPatch, tmp_path) -> Iterator[None]:
    """No provider variables from the outer environment; a per-test cache folder."""
    from proveai.cache import set_default_cache
    from proveai.providers import reset_providers

    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROVEAI_CACHE_DIR", str(tmp_path / "cache"))
    reset_providers()
    set_default_cache(None)
    yield
    reset_providers()
    set_default_cache(None)
