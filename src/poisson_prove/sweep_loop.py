"""Feeding a run's planned episodes through an executor into its batch sink.

Two paths give the same rows. When the executor says it would run the episodes in this thread,
one after another (`Executor.runs_in_caller`), the sweep runs them itself on a fused path: row
tuples straight from `execute.run_into`, without a Task and a dict per episode. Any other
executor (a pool, a cluster, a remote backend) gets Tasks and streams row dicts back in any
order. Either way the sink counts and writes whole batches, and Ctrl-C (KeyboardInterrupt)
passes through to the caller with every finished row still in the sink.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from poisson_prove.backends.base import Executor, Job
    from poisson_prove.plan import Plan
    from poisson_prove.store import BatchSink

#: progress(done this call, to run this call)
Progress = Callable[[int, int], None]

#: Episodes run between two progress reports on the fused path.
_CHUNK = 256


def run_planned(
    executor: Executor,
    job: Job,
    plan: Plan,
    salt: str,
    skip: set[tuple[str, int]],
    limit: int | None,
    sink: BatchSink,
    progress: Progress | None,
) -> None:
    """Run the planned episodes not in `skip` (at most `limit`) into `sink`."""
    from poisson_prove.episode_table import row_tuple
    from poisson_prove.plan import planned_chunks, planned_tasks

    to_run = plan.rollouts - len(skip)
    if limit is not None:
        to_run = min(to_run, limit)
    # [chaos] decides per episode (its seed and condition), which the fused path does not pass.
    if executor.runs_in_caller(job) and not job.chaos:
        from poisson_prove.execute import load_target, run_into

        rollout = load_target(job)
        step = max(1, min(_CHUNK, to_run // 20))  # progress at least every twentieth of the work
        for chunk in planned_chunks(plan.cells, plan.replicates, salt, skip, limit, step):
            run_into(rollout, job, chunk, sink.pending)
            sink.account()
            sink.maybe_flush()
            if progress is not None:
                progress(sink.ran, to_run)
        return
    rows = executor.execute(job, planned_tasks(plan.cells, plan.replicates, salt, skip, limit))
    try:
        for row in rows:
            sink.pending.append(row_tuple(row))
            sink.account()
            sink.maybe_flush()
            if progress is not None:
                progress(sink.ran, to_run)
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()  # the executor's `finally` cancels what is still in flight
