"""One episode: what a rollout returns, what it records, and how one is run.

- `model`     — the contract: `Episode` (the rollout's return value) and its validation
- `recording` — `record` / `step`: what a rollout records while it runs (steps, spans)
- `row`       — an episode as a stored row: the row's fields, its meta and spans as JSON
- `target`    — the rollout a run calls: imported by name, its signature checked, once a process
- `run`       — running one: a backend's `Job` and `Task`, `run_episode`, `run_into`
- `capture`   — OpenTelemetry instrumentor spans recorded into the episode (`[capture]`)
- `stream`    — spans kept past a kill: streamed to a side file while the episode runs
- `isolation` — the dry run's network-blocked import check, and the `--json` stream rule
"""

from __future__ import annotations

from poisson_prove.episode.model import Episode

__all__ = ["Episode"]
