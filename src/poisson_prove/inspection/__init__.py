"""Reading one run: what failed and why (`inspect RUN`), and the steps failed episodes share.

- `run`   — a run's outcomes, errors and failed episodes, per condition
- `trail` — the common trails of failed episodes' steps and spans
- `spans` — one episode's spans read back as typed objects, in call order, with parent links
- `otlp`  — one episode as an OTLP JSON trace (`inspect --episode C/R --otlp`)
"""
