"""Fixtures of the engine tests: running engines, and no handler left registered between tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.proveai.engine.engine_kit import engine_fixture, engines_fixture  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def _no_leftover_handlers() -> Iterator[None]:
    from proveai.engine import clear_handlers

    clear_handlers()
    yield
    clear_handlers()
