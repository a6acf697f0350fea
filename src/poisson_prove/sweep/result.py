"""How a sweep ended: the result `execute_sweep` and `run_sweep` return (public)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from poisson_prove.errors import ProveExit


@dataclass(frozen=True)
class SweepResult:
    """How a sweep ended."""

    # "done", "stopped" (--max-rollouts), "interrupted", "failed" (all errored) or
    # "process_exit" (a rollout called os._exit in this process, or ended it another way: the
    # sweep stopped there)
    verdict: str
    run_id: str
    name: str
    status: str  # "partial" or "complete"
    salt: str
    paired_with: str | None
    paired_with_name: str | None
    planned: int
    done: int  # stored in the run, this session and before
    errored: int  # stored rows without an outcome
    ran: int  # rollouts run by this call
    seconds: float
    system_exits: int = 0  # rollouts of this call that called sys.exit
    first_error: str | None = None
    capture_missing: Mapping[str, str] = field(default_factory=dict)
    process_exit: str | None = None  # the episode that called os._exit, with its code
    # how the sweep's worker process ended without a result (sweep.supervised), e.g. "the sweep's
    # process was ended by SIGKILL"; the verdict is then "process_exit" too
    process_ended: str | None = None
    # --stop-when-settled: the manifest's `sequential` block, and the planned rollouts not run
    # because their condition settled (the rollouts saved)
    sequential: Mapping[str, Any] | None = None
    saved: int = 0
    # [chaos]: the manifest's chaos block with what the faults reached ({} without faults)
    chaos: Mapping[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if self.verdict == "interrupted":
            return ProveExit.INTERRUPTED
        if self.verdict in ("stopped", "failed", "process_exit"):
            return ProveExit.STOPPED
        return ProveExit.OK
