"""Snapshots: pin known-good agent I/O, re-run the pipeline, grade every agent (the CI gate).

Inside the package imports point one way, from the bottom of this list up:

- `model`: the snapshot record (definitions, expected I/O, content hashes); its file is
  proveai.store.snapshots
- `stored_traces`: stored traces read in the snapshot's terms
- `grading`: one verdict per agent (an AgentVerdict holding a Grade, proveai.diff.verdict)
- `rerun`: the recorded command re-run once
- `replicates`: N fresh runs of it, model outages, and the replicate test with its power
- `tiers`: the three-tier grader behind the judge cache; `overrides`: `--override` without a re-run
- `verify`: one snapshot verified, its gate verdict, written to proveai/runs/<id>/
- `init` (`snapshot init`), `update`, `diffview`
- `gate`: verify over many snapshots (auto-targeted in CI by proveai.ci.targeting), one exit code

How results read is proveai.render's: render.verify (the tables, the verdict in words, the step
summary), render.snapshot (the terminal), render.verify_page (report.html).
"""

from proveai.snapshot.model import AgentDefinition, Capture, ExpectedIO, Snapshot

__all__ = ["AgentDefinition", "Capture", "ExpectedIO", "Snapshot"]
