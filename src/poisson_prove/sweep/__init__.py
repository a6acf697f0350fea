"""The sweep: run every condition of a spec N replicates and store every episode as a run.

Two steps, so the command line can show the plan and ask before anything is written:

- `prepare_sweep(request)` (prepare.py, resume.py) reads the spec (or, for a resume, the run's
  manifest), resolves the salt and the run paired with, imports and checks the target, and
  makes the plan, which holds the salt and names every episode's seed. It writes nothing.
- `execute_sweep(prepared)` (running.py, batches.py) creates (or reopens) the run, streams the
  planned episodes not yet stored through the backend's executor, writes them in batches and
  returns a `SweepResult` (result.py).

`run_sweep(...)` does both for a library caller, refusing an underpowered design the way the
command line does. `--stop-when-settled` is stop_when_settled.py with the rule of settle.py;
`--budget` sizes the design in budget.py; command.py holds the command's own workflow (the
budget's re-plan, the refusals with the user's own command line, how a sweep's ending is
reported). The lines and the `--json` document are drawn in poisson_prove.render.plan.
"""

from __future__ import annotations

from poisson_prove.sweep.prepare import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SPEC,
    PreparedSweep,
    SweepRequest,
    UnderpoweredError,
    prepare_sweep,
)
from poisson_prove.sweep.result import SweepResult
from poisson_prove.sweep.running import Progress, execute_sweep, run_sweep

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SPEC",
    "PreparedSweep",
    "Progress",
    "SweepRequest",
    "SweepResult",
    "UnderpoweredError",
    "execute_sweep",
    "prepare_sweep",
    "run_sweep",
]
