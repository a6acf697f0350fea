"""comparison/sequential.py: against a run swept with --stop-when-settled, McNemar's p-values
are the group-sequential test's over the looks that run recorded. The block is found on either
side; the p is recounted here by hand on the pairs below each look and checked against the
comparison's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import poisson_prove
from poisson_prove.comparison.sequential import sequential_record
from poisson_prove.design.conditions import condition_key
from poisson_prove.stats.sequential import sequential_mcnemar
from poisson_prove.store.info import RunInfo
from tests.poisson_prove.runs import from_outcomes, write_run

N = 120
BEFORE = {r for r in range(N) if r % 10 == 0}  # replicates whose episode ended unresolved
AFTER = {r for r in range(N) if r % 4 == 0 or r % 10 == 0}  # the same, and more


def info(run_id: str, block: Any = None) -> RunInfo:
    manifest: dict[str, Any] = {"run_id": run_id, "name": run_id}
    if block is not None:
        manifest["sequential"] = block
    return RunInfo(Path(run_id), manifest)


def test_the_record_is_the_block_of_the_run_swept_against_the_other_on_either_side() -> None:
    settled = {"stop_when_settled": True, "paired_with": "before-id", "conditions": {}}
    assert sequential_record(info("before-id"), info("after-id", settled)) is settled
    swept_first = {"stop_when_settled": True, "paired_with": "after-id"}
    assert sequential_record(info("before-id", swept_first), info("after-id")) is swept_first
    for block in [
        {"stop_when_settled": True, "paired_with": "a-third-run"},  # settled against another run
        {"stop_when_settled": False, "paired_with": "before-id"},
        "not a block",
    ]:
        assert sequential_record(info("before-id"), info("after-id", block)) is None, block
    assert sequential_record(info("before-id"), info("after-id")) is None


def write_pair(store: Path, looks: list[int] | None) -> str:
    """Two paired runs, the second recording `looks` for the refund condition (None: no block);
    the password condition rises too but records no look. Returns the refund condition's key."""
    outcomes = {
        ("refund", 0.0): ["unresolved" if r in BEFORE else "resolved" for r in range(N)],
        ("password", 0.0): ["unresolved" if r in BEFORE else "resolved" for r in range(N)],
    }
    before = write_run(store, from_outcomes(outcomes), name="before")
    outcomes[("refund", 0.0)] = ["unresolved" if r in AFTER else "resolved" for r in range(N)]
    outcomes[("password", 0.0)] = ["unresolved" if r in AFTER else "resolved" for r in range(N)]
    after = write_run(store, from_outcomes(outcomes), name="after", paired_with=before)
    key = condition_key({"ticket": "refund", "temperature": 0.0})
    if looks is not None:
        manifest_path = after.path / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["sequential"] = {
            "stop_when_settled": True,
            "paired_with": before.run_id,
            "alpha": 0.05,
            "planned_replicates": N,
            "conditions": {key: {"looks": looks, "reason": "settled", "stopped_at": looks[-1]}},
        }
        manifest_path.write_text(json.dumps(manifest))
    return key


def by_hand(looks: list[int], before: set[int] = BEFORE, after: set[int] = AFTER) -> float:
    """The stage-wise p from (b, c) counted on the pairs below each look."""
    series = [
        (sum(1 for r in before - after if r < look), sum(1 for r in after - before if r < look))
        for look in looks
    ]
    return sequential_mcnemar(series, [look / N for look in looks], 0.05).p


def rows(comparison: Any, ticket: str) -> dict[str, Any]:
    (condition,) = [c for c in comparison.conditions if c.label == f"ticket {ticket} · temperature 0.0"]
    return {row.outcome: row for row in condition.outcomes}


def test_the_p_is_the_sequential_tests_over_the_recorded_looks(tmp_path: Path) -> None:
    looks = [40, 80]  # the rows from replicate 80 on came in after the last look
    key = write_pair(tmp_path, looks)
    comparison = poisson_prove.compare("before", "after", store=tmp_path)
    assert comparison.sequential is not None and comparison.sequential["run"] == "after"
    assert comparison.sequential["looks"] == {key: looks}
    unresolved = rows(comparison, "refund")["unresolved"]
    assert unresolved.p == by_hand(looks)
    assert unresolved.p != by_hand([N])  # not a count over every stored pair
    # every stored row stays in the rates
    assert (unresolved.before.n, unresolved.before.k, unresolved.after.k) == (N, len(BEFORE), len(AFTER))
    assert rows(comparison, "refund")["timeout"].p == by_hand(looks, set(), set())  # (0, 0) at each look


def test_a_condition_without_looks_and_an_unpaired_method_keep_the_fixed_design(tmp_path: Path) -> None:
    write_pair(tmp_path / "settled", [40, 80])
    write_pair(tmp_path / "fixed", None)
    settled = poisson_prove.compare("before", "after", store=tmp_path / "settled")
    fixed = poisson_prove.compare("before", "after", store=tmp_path / "fixed")
    assert fixed.sequential is None
    # the condition that recorded no look has the fixed design's p
    assert rows(settled, "password")["unresolved"].p == rows(fixed, "password")["unresolved"].p
    assert rows(settled, "refund")["unresolved"].p != rows(fixed, "refund")["unresolved"].p
    fisher = poisson_prove.compare("before", "after", store=tmp_path / "settled", method="fisher")
    assert fisher.sequential is None  # sequential p-values are McNemar's only
