"""Replicates: N fresh runs of a pinned pipeline, and the test that asks whether an agent
regresses more often than the snapshot's own noise.

The runs. `snapshot init --replicates` pins N runs of the recorded command and `snapshot verify
--replicates N` grades N fresh ones (`capture_replicates`: each run into its own temporary
traces folder, returning the trace it wrote). A run whose agent failed because its model
endpoint was down is an outage (`model_outage`: an error about the model, never a regression).

The test. With a noisy model one fresh run against one pinned run cannot separate a
regression from sampling noise. Each agent is graded on the N fresh replicates, and the share
graded failing (regressed, missing or iteration_count_changed) is compared with the same share
among the pinned replicates graded against each other (leave-one-out: pinned j against pinned
j+1 mod M). Per agent, a one-sided Fisher exact test asks whether the fresh share is higher;
Benjamini-Hochberg controls the false discovery rate across agents at `alpha` (default 0.05).
An agent fails the gate when its adjusted p-value is at most alpha. `power_note` says the
smallest rise a test of this size can detect, so a pass with few replicates reads as
underpowered, not safe.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proveai.diff.verdict import FAILING, Status
from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.rerun import replicate_seed, rerun
from proveai.snapshot.stored_traces import dated_trace_files, load_trace_file

if TYPE_CHECKING:
    from proveai.traces.trace import Trace

DEFAULT_ALPHA = 0.05
# the statuses a replicate row counts, in the order its counts read
COUNTED = (
    Status.UNCHANGED,
    Status.DRIFTED,
    Status.REGRESSED,
    Status.MISSING,
    Status.ITERATION_COUNT_CHANGED,
    Status.INCONCLUSIVE,
    Status.NEW,
)


@dataclass(frozen=True)
class ReplicateVerdict:
    """One agent's replicate test: counts, the test's p-values and the decision."""

    agent: str
    fresh_counts: Mapping[Status, int]
    pinned_counts: Mapping[Status, int]
    n_fresh: int
    n_pinned: int
    fresh_failing: int
    pinned_failing: int
    p_value: float
    p_adjusted: float
    alpha: float
    fails: bool
    inconclusive: int

    @property
    def fresh_share(self) -> float:
        return self.fresh_failing / self.n_fresh if self.n_fresh else 0.0

    @property
    def pinned_share(self) -> float:
        return self.pinned_failing / self.n_pinned if self.n_pinned else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "fresh_counts": {status.value: n for status, n in self.fresh_counts.items()},
            "pinned_counts": {status.value: n for status, n in self.pinned_counts.items()},
            "n_fresh": self.n_fresh,
            "n_pinned": self.n_pinned,
            "fresh_failing": self.fresh_failing,
            "pinned_failing": self.pinned_failing,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "alpha": self.alpha,
            "fails": self.fails,
            "inconclusive": self.inconclusive,
        }


def fisher_greater(a: int, n: int, b: int, m: int) -> float:
    """One-sided Fisher exact p-value that a/n (fresh) exceeds b/m (pinned)."""
    # numpy and scipy behind it: ~0.1 s + 0.7 s, only when a replicate test runs
    from poisson_prove.stats.tests import fisher_one_sided

    return fisher_one_sided(a, n, b, m, alternative="greater")


def smallest_detectable_rise(n_fresh: int, n_pinned: int, alpha: float) -> float | None:
    """The smallest fresh failure share the one-sided Fisher test can call a rise over a pinned
    share of 0 at `alpha` (None: not even all n_fresh failing would be). Any real rise smaller
    than this passes the gate, so a pass with few replicates is underpowered, not safe."""
    for failing in range(1, n_fresh + 1):
        if fisher_greater(failing, n_fresh, 0, n_pinned) <= alpha:
            return failing / n_fresh
    return None


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """BH-adjusted p-values, in input order."""
    # numpy behind it: ~0.1 s, only when a replicate test runs
    from poisson_prove.stats.tests import benjamini_hochberg as bh

    return [float(p) for p in bh(list(p_values))]


def replicate_gate(
    fresh: Mapping[str, Sequence[Status]],
    pinned: Mapping[str, Sequence[Status]],
    *,
    alpha: float = DEFAULT_ALPHA,
) -> list[ReplicateVerdict]:
    """Per agent: statuses of the fresh replicates and of the leave-one-out pinned grades."""
    agents = list(dict.fromkeys([*pinned, *fresh]))
    rows = []
    p_values = []
    for agent in agents:
        fresh_statuses = list(fresh.get(agent, ()))
        pinned_statuses = list(pinned.get(agent, ()))
        a = sum(s in FAILING for s in fresh_statuses)
        b = sum(s in FAILING for s in pinned_statuses)
        n, m = len(fresh_statuses), len(pinned_statuses)
        p = fisher_greater(a, n, b, m) if n and m else 1.0
        p_values.append(p)
        rows.append((agent, fresh_statuses, pinned_statuses, a, b, n, m, p))
    adjusted = benjamini_hochberg(p_values) if p_values else []
    verdicts = []
    for (agent, fresh_statuses, pinned_statuses, a, b, n, m, p), p_adj in zip(rows, adjusted, strict=True):
        verdicts.append(
            ReplicateVerdict(
                agent=agent,
                fresh_counts=_counts(fresh_statuses),
                pinned_counts=_counts(pinned_statuses),
                n_fresh=n,
                n_pinned=m,
                fresh_failing=a,
                pinned_failing=b,
                p_value=p,
                p_adjusted=p_adj,
                alpha=alpha,
                fails=p_adj <= alpha,
                inconclusive=sum(s == Status.INCONCLUSIVE for s in fresh_statuses),
            )
        )
    return verdicts


def _counts(statuses: Sequence[Status]) -> dict[Status, int]:
    counter = Counter(statuses)
    return {status: counter[status] for status in COUNTED if counter[status]}


def leave_one_out_pairs(pinned_count: int) -> list[tuple[int, int]]:
    """(graded, reference) pairs among the pinned captures: j against j+1 mod M."""
    if pinned_count < 2:
        return []
    return [(j, (j + 1) % pinned_count) for j in range(pinned_count)]


def reference_for(fresh_index: int, pinned_count: int) -> int:
    """The pinned capture fresh replicate r is graded against: r mod M, spreading the load."""
    return fresh_index % pinned_count


# ---- the runs ----------------------------------------------------------------------------------

Progress = Callable[[int, int], None]  # (runs done, runs planned)


def capture_replicates(
    invocation: Mapping[str, Any],
    *,
    count: int,
    seed: int | None,
    stream: str,
    timeout_s: float,
    trace_name: str | None,
    root: Path | None = None,
    keep_dir: Path | None = None,
    notes: list[str] | None = None,
    progress: Progress | None = None,
) -> list[Trace]:
    """Re-run the invocation `count` times, each into its own temporary traces folder
    (removed afterwards); return the fresh trace of each run (copied to `keep_dir`).
    `progress(done, total)` is called before each run and once at the end."""
    traces = []
    for replicate in range(count):
        if progress is not None:
            progress(replicate, count)
        run_seed = None if seed is None else (seed if count == 1 else replicate_seed(seed, stream, replicate))
        tmp = Path(tempfile.mkdtemp(prefix="proveai-verify-"))
        try:
            result = rerun(
                invocation,
                traces_dir=tmp / "traces",
                timeout_s=timeout_s,
                root=root,
                replicate=replicate,
                seed=run_seed,
                # replicates sample the model's noise: a response cache (cached_dispatch, or
                # dispatch under verify) would serve every replicate the first one's replies
                extra_env={"PROVEAI_NO_CACHE": "1"} if count > 1 else None,
            )
            files = dated_trace_files(result.traces_dir)
            loaded = [load_trace_file(path) for _, path, _ in files]
            named = [t for t in loaded if trace_name is None or t.name == trace_name] or loaded
            if not named:
                tail = result.stderr_tail or result.stdout_tail or "(no output)"
                raise ProveAIError(
                    f"the pipeline ({' '.join(result.command[1:])}) exited {result.returncode} and wrote "
                    f"no trace; its last output:\n{tail}",
                    suggestions=[
                        "run it yourself to see why; the trace must be exported with a FileExporter "
                        "inside `with trace(...)`",
                    ],
                    exit_code=ProveAIExit.USAGE,
                )
            fresh = named[-1]
            outage = model_outage(fresh)
            if outage is not None:
                raise outage
            if result.returncode != 0 and notes is not None:
                notes.append(
                    f"replicate {replicate}: the pipeline exited {result.returncode} (graded its trace)"
                )
            if keep_dir is not None:
                keep_dir.mkdir(parents=True, exist_ok=True)
                source = next(p for tid, p, _ in files if tid == fresh.trace_id)
                shutil.copy2(source, keep_dir / f"{replicate:03d}-{fresh.trace_id}.json")
            traces.append(fresh)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if progress is not None:
        progress(count, count)
    return traces


# ---- what a verify could not see: outages, the test's power ---------------------------------

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
