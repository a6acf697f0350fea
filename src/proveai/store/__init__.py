"""The ./proveai/ folder of a project, file by file: every file proveai keeps there is read and
written in this package, and nowhere else (as `inspect_ai.log` owns the eval log).

| file under proveai/ | what it is | read and written by |
| --- | --- | --- |
| (the layout itself) | `Store`, `project_root`, `trace_files`, `check_name` | `layout` |
| `traces/<trace_id>.json` | one captured trace, OTLP JSON | `traces.writing` (FileExporter), `traces.load` |
| `traces/<trace_id>.detection.json` | the thin verdict written at capture | `traces.outcomes` |
| `traces/outcomes.jsonl` | check, composite and manual outcome rows | `traces.outcomes` |
| `traces/manifest.json`, `traces/manifest.journal.jsonl` | the trace index | `traces.index` |
| `traces/.lock` | the lock over the index and outcome files | `traces.lock` |
| (the listing) | `iter_traces`, `list_traces` and their filters | `traces.reading` |
| `snapshots/<name>.json` | a pinned snapshot (its record: `proveai.snapshot.model`) | `snapshots` |
| `snapshots/.judge_cache.json` (+ `.lock`, `.gitignore`) | graded verdicts, local state | `judge_cache` |
| `runs/verify-<stamp>-<hex>/` | a verify run: manifest, verdicts, metrics, `fresh/` traces | `runs` |
| `runs/<stamp>-<hex>/` | a replay run: manifest, verdicts, metrics (`Run`) | `runs` |
| `baselines/<name>.yaml`, `experiments/<name>.yaml` | `Baseline`, `Experiment` | `artifacts` |

A run's `report.html` is the report layer's page (`proveai.report`), written into the folder
`runs` made. The traces folder is `$PROVEAI_TRACES_DIR` when set (for the default project).

Every file here is replaced atomically through `prove_common.files` (a temporary
`.<name>.<pid>-<hex>.tmp` beside it, renamed into place), and what a killed writer left is
cleared where a writer next opens the folder. The layer sits just above the trace data model
(`proveai.traces`: the records it reads and writes) and below everything else in proveai.
"""

from __future__ import annotations

from proveai.store.layout import (
    TRACES_ENV,
    Store,
    check_name,
    default_traces_dir,
    project_root,
    trace_files,
    traces_root,
)

__all__ = [
    "TRACES_ENV",
    "Store",
    "check_name",
    "default_traces_dir",
    "project_root",
    "trace_files",
    "traces_root",
]
