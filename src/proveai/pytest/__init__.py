"""The proveai pytest plugin: `from proveai.pytest import snapshot`.

    @snapshot.test("qa_check")
    def test_qa_check_stable(snap):
        snap.assert_no_regression(my_new_output)

`snap` is bound to the pinned agent of proveai/snapshots/latest.json (choose another with
`pytest --proveai-snapshot NAME`); the grading is verify's (tier 1, tier 2, judge, judge cache).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MARKER = "proveai_snapshot"


class _SnapshotNamespace:
    """`snapshot.test(agent)`: mark a test so its `snap` fixture is that pinned agent."""

    def test(self, agent: str, *, snapshot: str | None = None) -> Callable[[Any], Any]:
        import pytest  # the pytest extra: only when a test is marked

        if not isinstance(agent, str) or not agent:
            raise TypeError("snapshot.test(agent): agent must be a non-empty agent name")
        return getattr(pytest.mark, MARKER)(agent, snapshot=snapshot)


snapshot = _SnapshotNamespace()

__all__ = ["MARKER", "snapshot"]
