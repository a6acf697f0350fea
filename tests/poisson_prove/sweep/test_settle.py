"""The stopping rule on rollouts whose failure rates are controlled."""

from __future__ import annotations

import numpy as np
import pytest

from poisson_prove.stats.sequential import sequential_mcnemar
from poisson_prove.sweep.settle import settle_condition

LOOKS = [40, 80, 120, 160, 200]


def _rollouts(rate_unresolved: float, rate_timeout: float, n: int, seed: int) -> list[str]:
    draws = np.random.default_rng(seed).random(n)
    cut = rate_unresolved + rate_timeout
    return ["unresolved" if u < rate_unresolved else "timeout" if u < cut else "resolved" for u in draws]


def test_a_large_change_in_every_failure_outcome_settles_early() -> None:
    before = _rollouts(0.05, 0.05, 200, 1)
    after = _rollouts(0.45, 0.40, 200, 2)
    stop = settle_condition(before, after, ["unresolved", "timeout"], LOOKS, 200, 0.05 / 4)
    assert stop.reason == "settled" and stop.stopped_at < 200
    assert {r.direction for r in stop.verdicts.values()} == {"rose"}
    assert stop.to_dict()["outcomes"]["timeout"]["direction"] == "rose"


def test_no_change_runs_to_the_plan_and_matches_the_test_on_its_counts() -> None:
    before = _rollouts(0.3, 0.1, 200, 3)
    after = _rollouts(0.3, 0.1, 200, 4)
    stop = settle_condition(before, after, ["unresolved", "timeout"], LOOKS, 200, 0.05 / 4)
    assert stop.reason == "planned replicates reached" and stop.stopped_at == 200
    # Independent recount of the last look's discordant pairs for one outcome.
    counts = []
    for r in LOOKS:
        b = sum(x == "unresolved" and y != "unresolved" for x, y in zip(before[:r], after[:r], strict=True))
        c = sum(y == "unresolved" and x != "unresolved" for x, y in zip(before[:r], after[:r], strict=True))
        counts.append((b, c))
    expected = sequential_mcnemar(counts, [r / 200 for r in LOOKS], 0.05 / 4)
    assert stop.verdicts["unresolved"].p == pytest.approx(expected.p, abs=1e-12)


def test_a_partial_run_is_still_running_and_bad_looks_are_refused() -> None:
    before = _rollouts(0.3, 0.1, 90, 5)
    after = _rollouts(0.3, 0.1, 90, 6)
    stop = settle_condition(before, after, ["unresolved"], LOOKS, 200, 0.05)
    assert stop.reason == "still running" and stop.stopped_at == 80
    with pytest.raises(ValueError):
        settle_condition(before, after, ["unresolved"], [50, 40], 200, 0.05)
