"""pytest11 entry point for proveai: the `snap` and `proveai_mock` fixtures.

Loaded by every pytest run in an environment where proveai is installed, so it imports
nothing heavy at module level and registers only an option, a marker and two fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from proveai.errors import ProveAIError
from proveai.pytest import MARKER

if TYPE_CHECKING:
    from proveai.mock import FailureMock, MockProvider, ScriptedMock, TraceMock
    from proveai.pytest.snap import SnapAgent

M = TypeVar("M", bound="MockProvider")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("proveai")
    group.addoption(
        "--proveai-snapshot",
        default="latest",
        metavar="NAME",
        help="snapshot the `snap` fixture reads (default latest)",
    )
    group.addoption(
        "--proveai-snapshots-dir",
        default=None,
        metavar="DIR",
        help="folder of the snapshots (default proveai/snapshots under the rootdir)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(agent, snapshot=None): bind the `snap` fixture to a pinned proveai agent"
    )


def _snapshots_dir(config: pytest.Config) -> Path:
    chosen = config.getoption("--proveai-snapshots-dir")
    if chosen:
        return Path(chosen)
    for base in (Path.cwd(), Path(config.rootpath)):
        candidate = base / "proveai" / "snapshots"
        if candidate.is_dir():
            return candidate
    return Path.cwd() / "proveai" / "snapshots"


@pytest.fixture
def snap(request: pytest.FixtureRequest) -> SnapAgent:
    """The pinned agent named by @snapshot.test("agent")."""
    # every pytest run in the environment loads this plugin: the snapshot grader only for `snap`
    from proveai.pytest.snap import SnapAgent

    marker = request.node.get_closest_marker(MARKER)
    if marker is None or not marker.args:
        pytest.fail('the `snap` fixture needs @snapshot.test("agent") on the test', pytrace=False)
    agent = str(marker.args[0])
    name = marker.kwargs.get("snapshot") or request.config.getoption("--proveai-snapshot")
    try:
        return SnapAgent.load(_snapshots_dir(request.config), name, agent)
    except ProveAIError as err:
        hint = "".join(f"\nnext: {s}" for s in err.suggestions)
        pytest.fail(f"proveai snapshot: {err.message}{hint}", pytrace=False)


class _MockSet:
    """`proveai_mock.responses([...])` etc.; every mock started here is stopped at teardown."""

    def __init__(self) -> None:
        self._active: list[MockProvider] = []

    def _start(self, mock: M) -> M:
        self._active.append(mock.start())
        return mock

    def responses(self, *args: Any, **kwargs: Any) -> ScriptedMock:
        # every pytest run in the environment loads this plugin: the mocks only when used
        from proveai import mock

        return self._start(mock.responses(*args, **kwargs))

    def from_trace(self, *args: Any, **kwargs: Any) -> TraceMock:
        # every pytest run in the environment loads this plugin: the mocks only when used
        from proveai import mock

        return self._start(mock.from_trace(*args, **kwargs))

    def failure(self, *args: Any, **kwargs: Any) -> FailureMock:
        # every pytest run in the environment loads this plugin: the mocks only when used
        from proveai import mock

        return self._start(mock.failure(*args, **kwargs))

    def stop_all(self) -> None:
        while self._active:
            self._active.pop().stop()  # newest first: each restores what it found


@pytest.fixture
def proveai_mock() -> Iterator[_MockSet]:
    """Start mock providers for one test; the registry is restored afterwards."""
    mocks = _MockSet()
    try:
        yield mocks
    finally:
        mocks.stop_all()
