"""Docs-example tests of proveai: the fake model server, a script runner, and no provider
variables from the outer environment (a per-test cache folder) in every test."""

from __future__ import annotations

import pytest

from tests.proveai.provider_kit import clean_providers, model_server  # noqa: F401  (fixtures)
from tests.proveai.script_kit import py  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def _clean_providers(request: pytest.FixtureRequest) -> None:
    request.getfixturevalue("clean_providers")
