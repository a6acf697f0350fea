"""The run store: one folder per run under ./prove-runs (or --store, or $POISSON_PROVE_STORE).

- `runs`     — `RunStore` (resolve, create, list runs), `RunInfo` (a run's folder and manifest),
               `RunWriter` (batches, events), `load_run`
- `table`    — the episode table's schema: columns, their types and encodings
- `columns`  — reading stored columns fast (dictionary-coded, in parallel)
- `checks`   — checking a stored run: unreadable or copied batches, duplicate episodes
- `compared` — the comparisons log (which pairs of runs were compared), for the dashboard
"""

from __future__ import annotations

from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import DEFAULT_STORE, STORE_ENV, RunStore, RunWriter, load_run

__all__ = ["DEFAULT_STORE", "STORE_ENV", "RunInfo", "RunStore", "RunWriter", "load_run"]
