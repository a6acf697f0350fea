"""Fixtures the snapshot gate's end-to-end tests share: a judging model server and a project."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import make_project, strict_judge_server


@pytest.fixture
def server() -> Iterator[ModelServer]:
    """The fake model server on 127.0.0.1, its judge answering "worse"."""
    with strict_judge_server() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository holding the three-agent pipeline, committed."""
    return make_project(tmp_path / "proj").parent
