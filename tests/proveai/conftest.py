"""Fixtures every proveai test folder may ask for: the fake model server, a clean provider
registry (turned on per folder), a script runner, and the local embedding model, loaded once."""

from __future__ import annotations

import pytest

from proveai.providers.embedding import LocalEmbeddingAdapter
from tests.proveai.provider_kit import clean_providers, model_server  # noqa: F401  (fixtures)
from tests.proveai.script_kit import py  # noqa: F401  (fixture)


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbeddingAdapter:
    """The real MiniLM model, loaded once for the whole session (it takes seconds)."""
    return LocalEmbeddingAdapter()
