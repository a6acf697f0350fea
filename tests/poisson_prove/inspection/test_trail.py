"""failure_trail: one line saying where an episode went wrong, from its spans."""

from __future__ import annotations

import json

from poisson_prove.inspection.trail import common_trails, failure_trail


def _chaos(call: int, start: float, parent: int | None = None, status: str = "error") -> dict:
    return {
        "name": f"chaos f{call}", "source": "chaos", "status": status, "start": start, "end": start,
        "parent": parent, "attributes": {"chaos.fault": f"f{call}", "chaos.call": call},
    }


def test_the_innermost_erring_step_and_the_faults_before_it() -> None:
    spans = [
        {"name": "plan", "status": "error", "error": "E: x", "parent": None, "start": 0, "end": 9},
        _chaos(0, 1.0, parent=0),
        {"name": "search", "status": "error", "error": "ValueError: no hits", "parent": 0, "start": 2,
         "end": 3},
        _chaos(1, 5.0, parent=0),  # after the failure: not part of the story
    ]
    assert failure_trail(json.dumps(spans)) == "plan > search: ValueError: no hits (after chaos f0 on call 0)"


def test_a_fault_that_ended_the_episode_and_episodes_without_errors() -> None:
    assert failure_trail([{"name": "call", "status": "ok", "parent": None}, _chaos(2, 1.0, parent=0)]) == (
        "call > chaos f2 on call 2"
    )
    latency_only = [{"name": "a", "status": "ok"}, _chaos(0, 1.0, status="ok")]
    assert failure_trail(latency_only) == "no span erred; last a"
    assert failure_trail(None) is None and failure_trail("not json") is None and failure_trail("[]") is None


def test_common_trails_counts_the_most_frequent_first() -> None:
    one = json.dumps([{"name": "a", "status": "error", "error": "X"}])
    two = json.dumps([{"name": "b", "status": "ok"}])
    assert common_trails([one, two, one, None]) == (("a: X", 2), ("no span erred; last b", 1))
