"""Grading a fresh capture against a pinned one: one verdict per agent.

Per agent: missing (pinned, not called now: fails the gate), new (called now, not pinned:
informational), iteration_count_changed (a loop ran a different number of times: fails the
gate), else each iteration is compared in order: identical hashes -> unchanged; same output
with different inputs or tool calls -> drifted; a different output goes through the
three-tier diff (structural, embeddings, judge). A mismatch the judge could not decide is
`inconclusive`. Every non-unchanged row says `direct edit` (its own prompt, model or settings hash
changed) or `downstream` (intact prompt and model: collateral of an upstream change).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prove_common.jsonio import canonical_json
from proveai.snapshot.fromtrace import agent_spans, definition_from_spans, expected_from_span
from proveai.snapshot.model import AgentDefinition, ExpectedIO, Snapshot, content_hash

UNCHANGED = "unchanged"
DRIFTED = "drifted"
REGRESSED = "regressed"
MISSING = "missing"
NEW = "new"
ITERATION_COUNT_CHANGED = "iteration_count_changed"
INCONCLUSIVE = "inconclusive"

FAILING = frozenset({REGRESSED, MISSING, ITERATION_COUNT_CHANGED})
# worst first: an agent's verdict is its worst iteration's
SEVERITY = (REGRESSED, MISSING, ITERATION_COUNT_CHANGED, INCONCLUSIVE, DRIFTED, NEW, UNCHANGED)
DIRECT_EDIT = "direct edit"
DOWNSTREAM = "downstream"
# how a status reads in a table, a step summary and report.html
SYMBOLS = {
    UNCHANGED: "✓",
    DRIFTED: "~",
    REGRESSED: "✗",
    MISSING: "✗",
    ITERATION_COUNT_CHANGED: "✗",
    INCONCLUSIVE: "?",
    NEW: "+",
}


@dataclass(frozen=True)
class PairGrade:
    """The grade of one (pinned output, fresh output) pair."""

    status: str  # unchanged | drifted | regressed | inconclusive
    rationale: str
    tier: str  # hash | tier1 | tier2 | judge | cache | none
    judged: bool = True


# (pinned, fresh, agent definition) -> PairGrade, for outputs whose hashes differ
PairGrader = Callable[[ExpectedIO, ExpectedIO, AgentDefinition], PairGrade]


@dataclass(frozen=True)
class AgentVerdict:
    """One row of the verdict table."""

    agent: str
    status: str
    change: str | None
    rationale: str
    tier: str = "hash"
    pinned_calls: int = 0
    fresh_calls: int = 0
    iterations: tuple[str, ...] = ()
    source_file: str | None = None
    fresh_prompt_hash: str | None = None
    fresh_model_hash: str | None = None

    @property
    def fails_gate(self) -> bool:
        return self.status in FAILING

    @property
    def sampling_noise(self) -> bool:
        """Unjudged because the agent's sampled outputs vary run to run (one run cannot tell)."""
        return self.rationale.startswith(NOISE_PREFIX)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "status": self.status,
            "change": self.change,
            "rationale": self.rationale,
            "tier": self.tier,
            "pinned_calls": self.pinned_calls,
            "fresh_calls": self.fresh_calls,
            "iterations": list(self.iterations),
            "source_file": self.source_file,
        }


@dataclass(frozen=True)
class FreshAgent:
    """What a fresh run says about one agent: its definition and its calls in order."""

    definition: AgentDefinition
    calls: tuple[ExpectedIO, ...]


@dataclass(frozen=True)
class Grading:
    verdicts: tuple[AgentVerdict, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def regressed(self) -> list[AgentVerdict]:
        return [v for v in self.verdicts if v.fails_gate]

    @property
    def inconclusive(self) -> list[AgentVerdict]:
        return [v for v in self.verdicts if v.status == INCONCLUSIVE]

    @property
    def drifted(self) -> list[AgentVerdict]:
        return [v for v in self.verdicts if v.status == DRIFTED]


def worst(statuses: Sequence[str]) -> str:
    return min(statuses, key=SEVERITY.index) if statuses else UNCHANGED


def change_kind(
    pinned: AgentDefinition,
    fresh: AgentDefinition | None,
    pinned_calls: Sequence[ExpectedIO] = (),
    fresh_calls: Sequence[ExpectedIO] = (),
) -> str:
    """`direct edit` when the agent itself changed (prompt, model declared or actually called,
    settings, code), or when it is a first agent (nothing above it to be collateral of);
    otherwise `downstream`."""
    if fresh is None:
        return DOWNSTREAM
    if not pinned.parent_agent:
        return DIRECT_EDIT
    if _called_models(pinned_calls) != _called_models(fresh_calls):
        return DIRECT_EDIT
    if pinned.code_hash and fresh.code_hash and pinned.code_hash != fresh.code_hash:
        return DIRECT_EDIT
    if (
        fresh.prompt_hash != pinned.prompt_hash
        or fresh.model_hash != pinned.model_hash
        or fresh.settings_hash != pinned.settings_hash
    ):
        return DIRECT_EDIT
    return DOWNSTREAM


def _sampled_temperature(definition: AgentDefinition) -> float | None:
    value = (definition.settings or {}).get("temperature")
    return float(value) if isinstance(value, int | float) and value > 0 else None


def _same_agent(
    pinned: AgentDefinition,
    fresh: AgentDefinition,
    pinned_calls: Sequence[ExpectedIO],
    fresh_calls: Sequence[ExpectedIO],
) -> bool:
    """Nothing of the agent itself changed: prompt, model (declared and called), settings, code."""
    return (
        pinned.prompt_hash == fresh.prompt_hash
        and pinned.model_hash == fresh.model_hash
        and pinned.settings_hash == fresh.settings_hash
        and (not pinned.code_hash or not fresh.code_hash or pinned.code_hash == fresh.code_hash)
        and _called_models(pinned_calls) == _called_models(fresh_calls)
    )


NOISE_PREFIX = "outputs vary"


def _as_noise(
    grade: PairGrade, pinned: ExpectedIO, fresh: ExpectedIO, temperature: float, upstream_noisy: bool
) -> PairGrade:
    """A sampled output that differs while the agent did not, and its input did not either (or
    changed only because a sampled agent above it varied): one run cannot tell a regression
    from the model's own variation, so it is not called one."""
    if grade.status in (UNCHANGED, DRIFTED):
        return grade
    if pinned.inputs_hash != fresh.inputs_hash and not upstream_noisy:
        return grade
    if fresh.status == "error" and pinned.status != "error":
        return grade
    return PairGrade(
        INCONCLUSIVE,
        f"{NOISE_PREFIX}: sampled at temperature {temperature:g} with an unchanged agent and "
        f"input ({grade.rationale}); one run cannot separate this from noise: verify with --replicates",
        grade.tier,
        judged=False,
    )


def _called_models(calls: Sequence[ExpectedIO]) -> list[Any]:
    return [(c.request or {}).get("model") if isinstance(c.request, Mapping) else None for c in calls]


def grade_iteration(
    pinned: ExpectedIO, fresh: ExpectedIO, definition: AgentDefinition, grader: PairGrader | None
) -> PairGrade:
    """One call against its pinned twin. `grader=None` is hash-only mode."""
    if fresh.status == "error" and pinned.status != "error":
        return PairGrade(REGRESSED, f"raised: {fresh.error or 'error'}", "hash")
    same_output = pinned.output_hash == fresh.output_hash
    same_inputs = pinned.inputs_hash == fresh.inputs_hash
    same_tools = pinned.tool_calls_hash == fresh.tool_calls_hash
    if same_output and same_inputs and same_tools:
        return PairGrade(UNCHANGED, "identical", "hash")
    if same_output:
        what = " and ".join(
            w for w, same in (("inputs", same_inputs), ("tool calls", same_tools)) if not same
        )
        return PairGrade(DRIFTED, f"{what} changed, output identical", "hash")
    if grader is None:
        return PairGrade(
            INCONCLUSIVE, "output hash differs (hash-only mode: not judged)", "hash", judged=False
        )
    return grader(pinned, fresh, definition)


def grade_agents(
    snapshot: Snapshot,
    fresh: Mapping[str, FreshAgent],
    *,
    grader: PairGrader | None,
    replicate: int = 0,
    only: Sequence[str] | None = None,
    single_sample: bool = True,
) -> Grading:
    """Every pinned agent (or `only` those) against the fresh run, plus new agents."""
    verdicts: list[AgentVerdict] = []
    noisy: set[str] = set()  # sampled agents whose output varied on its own
    names = [n for n in snapshot.agents if only is None or n in only]
    for name in names:
        definition = snapshot.agents[name]
        pinned_calls = snapshot.expected(name, replicate)
        now = fresh.get(name)
        if now is None:
            verdicts.append(
                AgentVerdict(
                    name,
                    MISSING,
                    None,
                    f"not called any more (pinned {len(pinned_calls)} call(s))",
                    pinned_calls=len(pinned_calls),
                    source_file=definition.source_file,
                )
            )
            continue
        change = change_kind(definition, now.definition, pinned_calls, now.calls)
        common = dict(
            pinned_calls=len(pinned_calls),
            fresh_calls=len(now.calls),
            source_file=definition.source_file,
            fresh_prompt_hash=now.definition.prompt_hash,
            fresh_model_hash=now.definition.model_hash,
        )
        if len(now.calls) != len(pinned_calls):
            verdicts.append(
                AgentVerdict(
                    name,
                    ITERATION_COUNT_CHANGED,
                    change,
                    f"called {len(now.calls)} time(s), pinned {len(pinned_calls)}",
                    **common,
                )
            )
            continue
        grades = [
            grade_iteration(p, f, definition, grader) for p, f in zip(pinned_calls, now.calls, strict=True)
        ]
        temperature = _sampled_temperature(definition)
        if single_sample and temperature and _same_agent(definition, now.definition, pinned_calls, now.calls):
            upstream_noisy = definition.parent_agent in noisy
            grades = [
                _as_noise(g, p, f, temperature, upstream_noisy)
                for g, p, f in zip(grades, pinned_calls, now.calls, strict=True)
            ]
            if any(g.rationale.startswith(NOISE_PREFIX) for g in grades):
                noisy.add(name)
        status = worst([g.status for g in grades])
        decisive = (
            next(g for g in grades if g.status == status)
            if grades
            else PairGrade(UNCHANGED, "identical", "hash")
        )
        rationale = decisive.rationale
        if len(grades) > 1 and status != UNCHANGED:
            index = next(i for i, g in enumerate(grades) if g.status == status)
            rationale = f"iteration {index + 1}/{len(grades)}: {rationale}"
        verdicts.append(
            AgentVerdict(
                name,
                status,
                None if status == UNCHANGED or decisive.rationale.startswith(NOISE_PREFIX) else change,
                rationale if status != UNCHANGED else "—",
                tier=decisive.tier,
                iterations=tuple(g.status for g in grades),
                **common,
            )
        )
    for name, now in fresh.items():
        if name not in snapshot.agents and (only is None or name in only):
            verdicts.append(
                AgentVerdict(
                    name,
                    NEW,
                    DIRECT_EDIT,
                    f"not in the snapshot ({len(now.calls)} call(s))",
                    fresh_calls=len(now.calls),
                    source_file=now.definition.source_file,
                )
            )
    _label_missing(verdicts, snapshot)
    return Grading(tuple(verdicts))


def _label_missing(verdicts: list[AgentVerdict], snapshot: Snapshot) -> None:
    """A missing agent is downstream when an agent above it changed, else a direct edit."""
    by_name = {v.agent: v for v in verdicts}
    for index, verdict in enumerate(verdicts):
        if verdict.status != MISSING:
            continue
        parent = snapshot.agents[verdict.agent].parent_agent
        seen: set[str] = set()
        upstream_changed = False
        while parent and parent not in seen:
            seen.add(parent)
            row = by_name.get(parent)
            if row is not None and row.status != UNCHANGED:
                upstream_changed = True
                break
            parent = snapshot.agents[parent].parent_agent if parent in snapshot.agents else None
        label = DOWNSTREAM if upstream_changed else DIRECT_EDIT
        verdicts[index] = AgentVerdict(**{**verdict.__dict__, "change": label})


def fresh_agents_of_trace(trace: Any) -> dict[str, FreshAgent]:
    """A fresh Trace as per-agent definitions and calls, in the snapshot's own terms."""
    return {
        name: FreshAgent(
            definition_from_spans(name, spans), tuple(expected_from_span(trace, s) for s in spans)
        )
        for name, spans in agent_spans(trace).items()
    }


def fresh_agents_of_capture(snapshot: Snapshot, replicate: int) -> dict[str, FreshAgent]:
    """A pinned capture seen as if it were fresh (leave-one-out and --quick checks)."""
    capture = snapshot.captures[replicate]
    return {
        name: FreshAgent(snapshot.agents[name], calls)
        for name, calls in capture.io.items()
        if name in snapshot.agents
    }


def output_text(value: Any) -> str:
    """What the judge and the text diff see of an output."""
    if isinstance(value, str):
        return value
    return canonical_json(value)


def pair_key(pinned: ExpectedIO, fresh: ExpectedIO) -> tuple[str, str]:
    return pinned.output_hash, fresh.output_hash


def messages_key(messages: Any) -> str:
    return content_hash(messages)
