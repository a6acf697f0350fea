"""Benchmark runs (cases x repeats) written straight into a store, as a sweep of a spec with a
case axis or an import leaves them: the stored spec declares the case axis with `cases = true`,
each condition is one case and its episodes carry the case's id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore
from tests.poisson_prove.runs import Episodes, write_run


def benchmark_episodes(
    outcomes: np.ndarray | Sequence[Sequence[str | None]],
    *,
    axis: str = "ticket",
    others: Mapping[str, Any] | None = None,
    t: np.ndarray | float = 5.0,
    horizon: float = 20.0,
    case_names: Sequence[str] | None = None,
) -> Episodes:
    """Episodes of K cases x m repeats: `outcomes[k][r]` is case k's replicate r (None: an
    error); the condition is {axis: case name, **others}."""
    episodes = Episodes()
    others = dict(others or {})
    rows = [list(row) for row in outcomes]
    names = list(case_names) if case_names is not None else [f"c{k:04d}" for k in range(len(rows))]
    times = np.broadcast_to(np.asarray(t, dtype=float), (len(rows), max((len(r) for r in rows), default=0)))
    for k, row in enumerate(rows):
        cfg = {axis: names[k], **others}
        for r, outcome in enumerate(row):
            episodes.add(
                cfg, r, outcome,
                float(times[k, r]) if outcome is not None else None,
                horizon if outcome is not None else None,
                case_id=names[k],
                error_kind=None if outcome is not None else "RuntimeError",
                error_message=None if outcome is not None else "the tool API returned 503",
            )
    return episodes


def write_benchmark(
    store: Path | str,
    episodes: Episodes,
    *,
    axis: str = "ticket",
    cases: bool = True,
    source: Mapping[str, Any] | None = None,
    **options: Any,
) -> RunInfo:
    """Store `episodes` as one run (tests.poisson_prove.runs.write_run) whose stored spec
    declares `axis` the case axis (`cases = true`; not when `cases` is false)."""
    axes_seen = list(dict.fromkeys(name for cfg in episodes.cfg for name in cfg))
    axes = [axis, *(name for name in axes_seen if name != axis)]
    info = write_run(store, episodes, axes=options.pop("axes", axes), **options)
    spec_axes: dict[str, Any] = {}
    for name in axes:
        values = list(dict.fromkeys(cfg[name] for cfg in episodes.cfg if name in cfg))
        spec_axes[name] = {"type": "categorical", "values": values}
    if cases:
        spec_axes[axis]["cases"] = True
    fields: dict[str, Any] = {"spec": {"axes": spec_axes}}
    if source is not None:
        fields["source"] = dict(source)
    writer = RunStore(store).open_run(info)
    writer.update_manifest(**fields)
    return RunStore(store).resolve(info.run_id)
