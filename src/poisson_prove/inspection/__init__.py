"""Reading one run: what failed and why (`inspect RUN`), and the steps failed episodes share.

- `run`   — a run's outcomes, errors and failed episodes, per condition
- `trail` — the common trails of failed episodes' steps and spans
"""
