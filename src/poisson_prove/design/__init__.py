"""The design of a sweep: what will run, on which seeds, and what it could detect.

- `spec`       — the TOML spec read and validated (`SweepSpec`, axes, outcomes, settings)
- `conditions` — a condition's canonical key and label
- `seeding`    — the one episode seed: a keyed hash of (salt, condition, replicate)
- `plan`       — the plan: conditions x replicates, their seeds, cost and the design's MDE
"""
