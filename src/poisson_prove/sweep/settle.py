"""When a condition of a paired sweep is settled: the stopping rule `--stop-when-settled` uses.

At each look (after a batch) every failure outcome of a condition is tested with the
group-sequential McNemar test (stats.sequential) on the twins run so far; the condition is
settled, and stops, once every failure outcome's test has crossed its boundary (rose or fell).
A condition that never settles runs to its planned replicates, where the last look spends
the rest of alpha. See docs/statistics.md, section 6.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from poisson_prove.stats.sequential import SequentialResult, sequential_mcnemar


@dataclass(frozen=True, slots=True)
class ConditionStop:
    """Where and why one condition stopped."""

    stopped_at: int  # replicates run when it stopped
    look: int  # 0-based look it stopped at
    reason: str  # "settled" | "planned replicates reached" | "still running"
    verdicts: dict[str, SequentialResult]

    def to_dict(self) -> dict[str, object]:
        return {
            "stopped_at": self.stopped_at,
            "look": self.look,
            "reason": self.reason,
            "outcomes": {
                name: {"p": r.p, "direction": r.direction, "crossed_look": r.crossed_look}
                for name, r in self.verdicts.items()
            },
        }


def settle_condition(
    before: Sequence[str | None],
    after: Sequence[str | None],
    failures: Sequence[str],
    looks: Sequence[int],
    planned: int,
    alpha: float,
) -> ConditionStop:
    """Apply the stopping rule to one condition's twins, indexed by replicate.

    `before[i]` and `after[i]` are the outcomes of replicate i (None: no outcome, left out of
    the pairs); `looks` are the replicate counts looked at so far (the planned ones that
    were reached: sweep.stop_when_settled), increasing, at most `planned`.
    """
    if not looks or any(b <= a for a, b in itertools.pairwise(looks)) or looks[-1] > planned:
        raise ValueError("looks must increase and stay within the planned replicates")
    n = min(len(before), len(after), looks[-1])
    b_arr = np.asarray(list(before[:n]), dtype=object)
    a_arr = np.asarray(list(after[:n]), dtype=object)
    paired = np.array([x is not None and y is not None for x, y in zip(b_arr, a_arr, strict=True)])
    fractions = [r / planned for r in looks]
    verdicts: dict[str, SequentialResult] = {}
    for k, reached in enumerate(looks):
        if reached > n:
            break
        for name in failures:
            was = (b_arr[:reached] == name) & paired[:reached]
            now = (a_arr[:reached] == name) & paired[:reached]
            counts = []
            for r in looks[: k + 1]:
                counts.append((int((was[:r] & ~now[:r]).sum()), int((now[:r] & ~was[:r]).sum())))
            verdicts[name] = sequential_mcnemar(counts, fractions[: k + 1], alpha)
        if all(verdicts[name].crossed_look is not None for name in failures):
            return ConditionStop(reached, k, "settled", dict(verdicts))
        if reached >= planned:
            return ConditionStop(reached, k, "planned replicates reached", dict(verdicts))
    last = max(k for k, r in enumerate(looks) if r <= n) if looks[0] <= n else 0
    return ConditionStop(min(n, looks[last]), last, "still running", dict(verdicts))
