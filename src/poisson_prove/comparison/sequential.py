"""The sequential test's p-values for a comparison with a run swept with `--stop-when-settled`.

Such a run recorded, per condition, the replicate counts at which it looked (its manifest's
`sequential` block). The McNemar counts (b, c) are recounted on the pairs below each look's
count, exactly as the comparison counts them (comparison.stats), and the
group-sequential McNemar test (stats.sequential) turns those cumulative counts into the
stage-wise p-value, which replaces the fixed design's p before Benjamini-Hochberg. Rows
stored after a condition's last look (episodes already in flight when it settled) stay in
the rates but not in its p. See docs/comparing.md and docs/statistics.md, section 6.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from poisson_prove.comparison.frame import Side
from poisson_prove.comparison.stats import mcnemar_counts
from poisson_prove.stats.sequential import sequential_mcnemar
from poisson_prove.store.info import RunInfo


def sequential_record(before: RunInfo, after: RunInfo) -> Mapping[str, Any] | None:
    """The `sequential` block of whichever run was swept with --stop-when-settled against the other."""
    for run, other in ((after, before), (before, after)):
        block = run.manifest.get("sequential")
        if not isinstance(block, dict) or not block.get("stop_when_settled"):
            continue
        if block.get("paired_with") == other.run_id:
            return block
    return None


def sequential_p_values(
    record: Mapping[str, Any],
    before: Side,
    after: Side,
    conditions: Sequence[str],
    universe: int,
    horizon: float,
) -> dict[tuple[int, int], float]:
    """(condition index, outcome index) -> the sequential p, for every recorded condition."""
    planned = int(record.get("planned_replicates") or 0)
    alpha = float(record.get("alpha") or 0.05)
    recorded = record.get("conditions") or {}
    looks_of = {
        i: [int(r) for r in (recorded.get(key) or {}).get("looks") or []] for i, key in enumerate(conditions)
    }
    looks_of = {i: looks for i, looks in looks_of.items() if looks}
    if planned < 1 or not looks_of:
        return {}
    counts_at: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for reached in sorted({r for looks in looks_of.values() for r in looks}):
        masked = [
            dataclasses.replace(side, condition=np.where(side.frame.replicate < reached, side.condition, -1))
            for side in (before, after)
        ]
        _, b, c = mcnemar_counts(masked[0], masked[1], len(conditions), universe, horizon)
        counts_at[reached] = (b, c)
    out: dict[tuple[int, int], float] = {}
    for i, looks in looks_of.items():
        fractions = [min(1.0, r / planned) for r in looks]
        for e in range(universe):
            series = [(int(counts_at[r][0][i, e]), int(counts_at[r][1][i, e])) for r in looks]
            out[(i, e)] = sequential_mcnemar(series, fractions, alpha).p
    return out
