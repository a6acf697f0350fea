"""What keeps a verify honest about what it could not see: a model outage during the re-run
(an error about the model, never a regression) and the power of the replicate test (the
smallest rise its size can detect, so a pass with few replicates reads as underpowered)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.replicates import smallest_detectable_rise

if TYPE_CHECKING:
    from proveai.traces.trace import Trace

# what a model call that never reached a working model records (providers/_http.py)
_OUTAGE_MARKERS = ("could not connect", "timed out after", "after ")
_OUTAGE_STATUSES = ("HTTP 5", "HTTP 429", "HTTP 408")


def model_outage(trace: Trace) -> ProveAIError | None:
    """An error about the model when a fresh run's agent failed because its model endpoint
    was down (connection refused, timeouts, 5xx after retries): an outage is not a regression
    of the code under test, so verify stops instead of grading it."""
    for span in trace.spans:
        error = str(span.error or "")
        if span.status != "error" or not error.startswith("ProviderError"):
            continue
        down = "could not connect" in error or "timed out after" in error
        down = down or ("attempt(s))" in error and any(s in error for s in _OUTAGE_STATUSES))
        if down:
            detail = error.split(": ", 1)[-1]
            return ProveAIError(
                f"the model was unreachable during the re-run (agent {span.name!r}): {detail}",
                suggestions=[
                    "this is an outage, not a regression: check that the model endpoint is up, "
                    "then verify again",
                ],
                exit_code=ProveAIExit.USAGE,
            )
    return None


def power_note(n_fresh: int, n_pinned: int, alpha: float, agents: int) -> str:
    """What the replicate test can detect at this size, so a pass is read as what it is."""
    # the gate corrects over agents (BH): the first rejection needs p <= alpha / agents
    level = alpha / max(1, agents)
    rise = smallest_detectable_rise(n_fresh, n_pinned, level)
    if rise is None:
        return (
            f"underpowered: with {n_fresh} fresh vs {n_pinned} pinned replicates the test cannot flag "
            f"any rise at alpha {alpha:g} (even every fresh run failing); a pass here is not evidence "
            "of safety: raise --replicates (and pin as many)"
        )
    return (
        f"power: with {n_fresh} fresh vs {n_pinned} pinned replicates the smallest failure-rate rise "
        f"this test can detect (from 0, alpha {alpha:g} over {agents} agent(s)) is 0 → {rise:.2f}; "
        "a smaller rise passes: raise --replicates to see it"
    )
