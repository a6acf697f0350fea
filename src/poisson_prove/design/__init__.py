"""The design of a sweep: what will run, on which seeds, and what it could detect.

- `spec`       — the TOML spec read and validated (`SweepSpec`, axes, outcomes, settings)
- `spec_where` — where a key is in the spec's text (for errors), and the checks tables share
- `spec_capture` — the spec's [capture] table: instrumentors, content, proveai checks
- `cases`      — a benchmark's case ids: its case axis's values, inline or read from a file
- `conditions` — a condition's canonical key and label, and a benchmark's pooled group key
- `seeding`    — the one episode seed: a keyed hash of (salt, condition, replicate)
- `plan`       — the plan: conditions x replicates, their seeds, cost and the design's MDE
- `pooled`     — a benchmark's plan: K cases x m replicates at within-case correlation 0 and 1
"""
