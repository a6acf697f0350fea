"""Benchmark runs for the dashboard tests: pooled groups built with the comparison tests' kit
(tests.poisson_prove.comparison.cases_kit), joined into one run's episodes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.poisson_prove.comparison.cases_kit import benchmark_episodes
from tests.poisson_prove.runs import Episodes


def pooled_groups(per_group: Mapping[float, Sequence[Sequence[str | None]]], **options: Any) -> Episodes:
    """One run's episodes: per temperature (a pooled group) its cases' outcomes, `rows[k][r]`
    case k's replicate r; `options` go to benchmark_episodes."""
    episodes = Episodes()
    for temperature, rows in per_group.items():
        part = benchmark_episodes(rows, others={"temperature": temperature}, **options)
        for name in vars(episodes):
            getattr(episodes, name).extend(getattr(part, name))
    return episodes
