"""Shared by the tests of tests/poisson_prove: the chaos tests' real HTTP server, two paired runs
swept through the installed script for the store-damage tests, and two sweeps of the example
for the dashboard's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.poisson_prove.chaos.conftest import tool_server  # noqa: F401 - a fixture
from tests.poisson_prove.helpers import SEEDED_TARGET, manifests, small_spec, write

SALT = "00112233445566778899aabbccddeeff"


@pytest.fixture
def two_runs(prove, workdir) -> tuple[Path, Path]:
    """Runs "a" and "b" (paired), 40 episodes each in batches of 10; returns their folders."""
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20)
    for name, extra in (("a", ["--salt", SALT]), ("b", ["--pair-with", "a"])):
        result = prove("sweep", "--yes", "--max-mde", "1", "--batch-size", "10", "--name", name, *extra)
        assert result.returncode == 0, result.stderr
    store = workdir / "prove-runs"
    by_name = {m["name"]: store / m["run_id"] for m in manifests(store)}
    return by_name["a"], by_name["b"]


@pytest.fixture
def paired_store(prove, workdir: Path) -> Path:
    """Two real sweeps of the example agent, the second paired with the first."""
    assert prove("init", "--example").returncode == 0
    assert prove("sweep", "--yes").returncode == 0
    assert prove("sweep", "--yes", "--pair-with", "latest").returncode == 0
    return workdir / "prove-runs"
