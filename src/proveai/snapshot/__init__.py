"""Snapshots: pin known-good agent I/O, re-run the pipeline, grade every agent (the CI gate).

Inside the package imports point one way, from the bottom of this list up:

- `model`: the snapshot file (definitions, expected I/O, content hashes); `judge_cache`
- `fromtrace`: stored traces read in the snapshot's terms
- `grading`: one verdict per agent; `replicates` and `soundness`: the replicate test, outages
- `rerun`: the recorded command re-run once; `replicate_runs`: N fresh runs of it
- `tiers`: the three-tier grader; `whatif`: `--override` without a re-run
- `verify`: one snapshot verified and written to proveai/runs/<id>/
- `pin` (init), `update`, `diffview`; `targeting` (CI auto-targeting)
- `gate`: verify over many snapshots, one exit code; `render` and `ci_summary`: how results read

Drawing on a terminal is the CLI's (proveai.cli._snapshot_output); report.html is the report
layer's (proveai.report.verify_page).
"""

from proveai.snapshot.model import AgentDefinition, Capture, ExpectedIO, Snapshot

__all__ = ["AgentDefinition", "Capture", "ExpectedIO", "Snapshot"]
