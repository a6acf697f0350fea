"""Every test here starts with no provider variables from the outer environment and its own cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clean_providers(clean_providers: None) -> None:
    pass
