"""The verdict model: what grading an output, an edge or an agent decides, in one set of types.

- `Status`: what a comparison found; `Tier`: what decided it.
- `Grade`: the decision on one (old output, new output) pair, from whichever tier made it.
- `EdgeVerdict`: a grade placed on one parent→child edge of a replayed trace.
- `AgentVerdict`: a grade placed on one agent of a snapshot verify, with its call counts.

Replay's attribution, snapshot verify (one run, replicates, what-if) and every drawing of
them (terminal tables, report.html, the step summary) read these types. `Status` and `Tier`
are StrEnums: a stored verdict holds the same strings it always did.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

ROOT = "root"  # how an edge from no parent is written: root→agent


class Status(StrEnum):
    """What a comparison found."""

    UNCHANGED = "unchanged"
    DRIFTED = "drifted"  # changed, not for the worse (wording; inputs only; judged equivalent or better)
    REGRESSED = "regressed"
    INCONCLUSIVE = "inconclusive"  # changed, and nothing could decide whether for the worse
    PATH_CHANGED = "path_changed"  # replay: a parent now calls a different set of agents
    ITERATION_COUNT_CHANGED = "iteration_count_changed"  # a loop ran a different number of times
    MISSING = "missing"  # snapshot: pinned, not called any more
    NEW = "new"  # snapshot: called now, not pinned


# the statuses that fail the snapshot gate
FAILING = frozenset({Status.REGRESSED, Status.MISSING, Status.ITERATION_COUNT_CHANGED})


class Tier(StrEnum):
    """What decided a grade. `level` is its number in the diff stack (1 structural, 2
    embeddings, 3 judge; 0 for anything decided without the stack), the number a replay's
    verdicts.json stores and its report shows."""

    HASH = "hash"  # snapshot: content hashes (identical, only inputs changed, an error, hash-only)
    TOPOLOGY = "topology"  # replay: the trace's shape (its path or a loop count changed)
    HELD = "held"  # kept at its recorded output (not replayed, or not re-executed)
    REPLAY = "replay"  # what-if: the replay or re-invocation that would have given an output failed
    TIER1 = "tier1"
    TIER2 = "tier2"
    JUDGE = "judge"
    CACHE = "cache"  # snapshot: a judge decision stored in the judge cache
    REPLICATES = "replicates"  # snapshot: the replicate test over N fresh runs

    @property
    def level(self) -> int:
        return _LEVELS.get(self, 0)


_LEVELS = {Tier.TIER1: 1, Tier.TIER2: 2, Tier.JUDGE: 3, Tier.CACHE: 3}


@dataclass(frozen=True)
class Grade:
    """The decision on one (old output, new output) pair.

    unified: the text diff of the two outputs ('' when they are equal or none was computed).
    confidence: 0..1 (the judge's own, an embedding's margin; 1 for a rule). judged: False when
    the pair could not be judged (no judge, an unfit judge, sampling noise): never stored in the
    judge cache, never a pass. sampling_noise: not judged because the agent's sampled outputs
    vary run to run, so one run cannot tell a regression from the model's own variation.
    """

    status: Status
    tier: Tier
    rationale: str
    unified: str = ""
    confidence: float = 1.0
    judged: bool = True
    sampling_noise: bool = False


class Graded:
    """What a verdict reads from its one Grade: a verdict is a subject (an edge, an agent) and a
    Grade, never a second copy of the grade's fields."""

    grade: Grade

    @property
    def status(self) -> Status:
        return self.grade.status

    @property
    def tier(self) -> Tier:
        return self.grade.tier

    @property
    def rationale(self) -> str:
        return self.grade.rationale

    @property
    def confidence(self) -> float:
        return self.grade.confidence

    @property
    def unified(self) -> str:
        return self.grade.unified

    @property
    def sampling_noise(self) -> bool:
        return self.grade.sampling_noise


@dataclass(frozen=True)
class EdgeVerdict(Graded):
    """The grade of one parent→child edge of one trace.

    change: "direct edit" (the agent was overridden), "downstream" (only its inputs changed)
    or None. `inconclusive` is True exactly when the outputs' texts differ and the judge could
    not decide (no provider, an error, a malformed reply): the status is then inconclusive.
    """

    parent: str | None
    child: str
    span_id: str
    grade: Grade
    old_output: Any = None
    new_output: Any = None
    change: str | None = None

    @property
    def inconclusive(self) -> bool:
        return self.grade.status == Status.INCONCLUSIVE

    @property
    def edge(self) -> str:
        return f"{self.parent or ROOT}→{self.child}"

    def to_dict(self) -> dict[str, Any]:
        """The verdict as a replay's verdicts.json stores it (the tier as its level)."""
        return {
            "edge": self.edge,
            "parent": self.parent,
            "child": self.child,
            "span_id": self.span_id,
            "status": self.status.value,
            "tier": self.tier.level,
            "rationale": self.rationale,
            "confidence": self.confidence,
            "old_output": copy.deepcopy(self.old_output),
            "new_output": copy.deepcopy(self.new_output),
            "unified": self.unified,
            "change": self.change,
            "inconclusive": self.inconclusive,
        }


@dataclass(frozen=True)
class AgentVerdict(Graded):
    """One agent of a snapshot verify: its grade (the worst of its calls', or the replicate
    test's), whether it is a direct edit or downstream, and its calls.

    iterations: each call's status, in order; decisive: the index of the call whose grade is
    the agent's.
    """

    agent: str
    grade: Grade
    change: str | None = None
    pinned_calls: int = 0
    fresh_calls: int = 0
    iterations: tuple[Status, ...] = ()
    decisive: int = 0
    source_file: str | None = None
    fresh_prompt_hash: str | None = None
    fresh_model_hash: str | None = None

    @property
    def fails_gate(self) -> bool:
        return self.grade.status in FAILING

    def to_dict(self) -> dict[str, Any]:
        """The row as a verify's verdicts.json stores it."""
        return {
            "agent": self.agent,
            "status": self.status.value,
            "change": self.change,
            "rationale": self.rationale,
            "tier": self.tier.value,
            "pinned_calls": self.pinned_calls,
            "fresh_calls": self.fresh_calls,
            "iterations": [status.value for status in self.iterations],
            "source_file": self.source_file,
        }
