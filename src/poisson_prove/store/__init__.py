"""The run store: one folder per run under ./prove-runs (or --store, or $POISSON_PROVE_STORE).

Its rooms, lowest first:

- `table`    — the episode table's schema: columns, their types, which are dictionary-encoded
- `info`     — `RunInfo`: a run's folder and manifest, its batch files and events, reading them
- `codes`    — Arrow columns as NumPy: strings as codes, numbers with nulls filled
- `checks`   — checking a stored run: unlistable manifests, copied batches, duplicate episodes
- `compaction` — a complete run's batch files rewritten as one file, crash-safe at every instant
- `columns`  — reading a run's columns fast (dictionary-coded, in parallel, checked unique)
- `runs`     — `RunStore` (resolve, create, list runs), `RunWriter` (batches, events), `load_run`
- `compared` — the comparisons log (which pairs of runs were compared), for the dashboard
"""

from __future__ import annotations

from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import DEFAULT_STORE, STORE_ENV, RunStore, RunWriter, load_run

__all__ = ["DEFAULT_STORE", "STORE_ENV", "RunInfo", "RunStore", "RunWriter", "load_run"]
