"""Fixtures every proveai test may ask for: the fake model server, a script runner, and the
local embedding model, loaded once; and, for every test, a clean provider registry."""

from __future__ import annotations

import pytest

from proveai.providers.embedding import LocalEmbeddingAdapter
from tests.proveai.provider_kit import clean_providers, model_server  # noqa: F401  (fixtures)
from tests.proveai.script_kit import py  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def _clean_providers(request: pytest.FixtureRequest) -> None:
    """Every test starts with no provider variables from the outer environment, the default
    registry and its own cache: a provider one test registers never answers for the next (with
    a worker per core, which tests share a process is not fixed)."""
    request.getfixturevalue("clean_providers")


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbeddingAdapter:
    """The real MiniLM model, loaded once for the whole session (it takes seconds)."""
    return LocalEmbeddingAdapter()
