"""The replicate gate: is an agent regressing more often than the snapshot's own noise?

With a noisy model one fresh run against one pinned run cannot separate a regression from
sampling noise. `verify --replicates N` therefore grades each agent on N fresh replicates and
compares the share graded failing (regressed, missing or iteration_count_changed) with the
same share among the pinned replicates graded against each other (leave-one-out: pinned j
against pinned j+1 mod M). Per agent, a one-sided Fisher exact test asks whether the fresh
share is higher; Benjamini-Hochberg controls the false discovery rate across agents at
`alpha` (default 0.05). An agent fails the gate when its adjusted p-value is at most alpha.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from proveai.diff.verdict import FAILING, Status

DEFAULT_ALPHA = 0.05
# the statuses a replicate row counts, in the order its counts read
COUNTED = (
    Status.UNCHANGED,
    Status.DRIFTED,
    Status.REGRESSED,
    Status.MISSING,
    Status.ITERATION_COUNT_CHANGED,
    Status.INCONCLUSIVE,
    Status.NEW,
)


@dataclass(frozen=True)
class ReplicateVerdict:
    """One agent's replicate test: counts, the test's p-values and the decision."""

    agent: str
    fresh_counts: Mapping[Status, int]
    pinned_counts: Mapping[Status, int]
    n_fresh: int
    n_pinned: int
    fresh_failing: int
    pinned_failing: int
    p_value: float
    p_adjusted: float
    alpha: float
    fails: bool
    inconclusive: int

    @property
    def fresh_share(self) -> float:
        return self.fresh_failing / self.n_fresh if self.n_fresh else 0.0

    @property
    def pinned_share(self) -> float:
        return self.pinned_failing / self.n_pinned if self.n_pinned else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "fresh_counts": {status.value: n for status, n in self.fresh_counts.items()},
            "pinned_counts": {status.value: n for status, n in self.pinned_counts.items()},
            "n_fresh": self.n_fresh,
            "n_pinned": self.n_pinned,
            "fresh_failing": self.fresh_failing,
            "pinned_failing": self.pinned_failing,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "alpha": self.alpha,
            "fails": self.fails,
            "inconclusive": self.inconclusive,
        }


def fisher_greater(a: int, n: int, b: int, m: int) -> float:
    """One-sided Fisher exact p-value that a/n (fresh) exceeds b/m (pinned)."""
    # numpy and scipy behind it: ~0.1 s + 0.7 s, only when a replicate test runs
    from poisson_prove.stats.tests import fisher_one_sided

    return fisher_one_sided(a, n, b, m, alternative="greater")


def smallest_detectable_rise(n_fresh: int, n_pinned: int, alpha: float) -> float | None:
    """The smallest fresh failure share the one-sided Fisher test can call a rise over a pinned
    share of 0 at `alpha` (None: not even all n_fresh failing would be). Any real rise smaller
    than this passes the gate, so a pass with few replicates is underpowered, not safe."""
    for failing in range(1, n_fresh + 1):
        if fisher_greater(failing, n_fresh, 0, n_pinned) <= alpha:
            return failing / n_fresh
    return None


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """BH-adjusted p-values, in input order."""
    # numpy behind it: ~0.1 s, only when a replicate test runs
    from poisson_prove.stats.tests import benjamini_hochberg as bh

    return [float(p) for p in bh(list(p_values))]


def replicate_gate(
    fresh: Mapping[str, Sequence[Status]],
    pinned: Mapping[str, Sequence[Status]],
    *,
    alpha: float = DEFAULT_ALPHA,
) -> list[ReplicateVerdict]:
    """Per agent: statuses of the fresh replicates and of the leave-one-out pinned grades."""
    agents = list(dict.fromkeys([*pinned, *fresh]))
    rows = []
    p_values = []
    for agent in agents:
        fresh_statuses = list(fresh.get(agent, ()))
        pinned_statuses = list(pinned.get(agent, ()))
        a = sum(s in FAILING for s in fresh_statuses)
        b = sum(s in FAILING for s in pinned_statuses)
        n, m = len(fresh_statuses), len(pinned_statuses)
        p = fisher_greater(a, n, b, m) if n and m else 1.0
        p_values.append(p)
        rows.append((agent, fresh_statuses, pinned_statuses, a, b, n, m, p))
    adjusted = benjamini_hochberg(p_values) if p_values else []
    verdicts = []
    for (agent, fresh_statuses, pinned_statuses, a, b, n, m, p), p_adj in zip(rows, adjusted, strict=True):
        verdicts.append(
            ReplicateVerdict(
                agent=agent,
                fresh_counts=_counts(fresh_statuses),
                pinned_counts=_counts(pinned_statuses),
                n_fresh=n,
                n_pinned=m,
                fresh_failing=a,
                pinned_failing=b,
                p_value=p,
                p_adjusted=p_adj,
                alpha=alpha,
                fails=p_adj <= alpha,
                inconclusive=sum(s == Status.INCONCLUSIVE for s in fresh_statuses),
            )
        )
    return verdicts


def _counts(statuses: Sequence[Status]) -> dict[Status, int]:
    counter = Counter(statuses)
    return {status: counter[status] for status in COUNTED if counter[status]}


def leave_one_out_pairs(pinned_count: int) -> list[tuple[int, int]]:
    """(graded, reference) pairs among the pinned captures: j against j+1 mod M."""
    if pinned_count < 2:
        return []
    return [(j, (j + 1) % pinned_count) for j in range(pinned_count)]


def reference_for(fresh_index: int, pinned_count: int) -> int:
    """The pinned capture fresh replicate r is graded against: r mod M, spreading the load."""
    return fresh_index % pinned_count
