"""Grading a fresh capture against a pinned one: one verdict per agent.

Per agent: missing (pinned, not called now: fails the gate), new (called now, not pinned:
informational), iteration_count_changed (a loop ran a different number of times: fails the
gate), else each iteration is compared in order: identical hashes -> unchanged; same output
with different inputs or tool calls -> drifted; a different output goes through the
three-tier diff (structural, embeddings, judge). A mismatch the judge could not decide is
`inconclusive`. Every non-unchanged row says `direct edit` (its own prompt, model or settings hash
changed) or `downstream` (intact prompt and model: collateral of an upstream change).

The rows are `AgentVerdict`s and each call's decision a `Grade` (proveai.diff.verdict).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from prove_common.jsonio import canonical_json
from proveai.diff.tier1 import text_diff
from proveai.diff.verdict import AgentVerdict, Grade, Status, Tier
from proveai.snapshot.model import AgentDefinition, ExpectedIO, Snapshot, content_hash
from proveai.snapshot.stored_traces import agent_spans, definition_from_spans, expected_from_span
from proveai.traces.trace import Trace

# worst first: an agent's verdict is its worst iteration's
SEVERITY = (
    Status.REGRESSED,
    Status.MISSING,
    Status.ITERATION_COUNT_CHANGED,
    Status.INCONCLUSIVE,
    Status.DRIFTED,
    Status.NEW,
    Status.UNCHANGED,
)
DIRECT_EDIT = "direct edit"
DOWNSTREAM = "downstream"

# (pinned, fresh, agent definition) -> its Grade, for outputs whose hashes differ
PairGrader = Callable[[ExpectedIO, ExpectedIO, AgentDefinition], Grade]


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
        return [v for v in self.verdicts if v.status == Status.INCONCLUSIVE]

    @property
    def drifted(self) -> list[AgentVerdict]:
        return [v for v in self.verdicts if v.status == Status.DRIFTED]


def worst(statuses: Sequence[Status]) -> Status:
    return min(statuses, key=SEVERITY.index) if statuses else Status.UNCHANGED


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


def _sampling(definition: AgentDefinition, calls: Sequence[ExpectedIO]) -> str | None:
    """How the agent's model calls sampled, in words, when they did: `at temperature 0.7`; `at
    the provider's default temperature` when its recorded model calls name none (the defaults of
    OpenAI's API and the servers compatible with it, Anthropic's and llama.cpp's are all above
    0: a call that names no temperature is sampled). None when the calls asked for temperature
    0, or the agent made no model call proveai recorded (its own code: same input, same output)."""
    value = (definition.settings or {}).get("temperature")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"at temperature {value:g}" if value > 0 else None
    if value is None and any(isinstance(call.request, Mapping) for call in calls):
        return "at the provider's default temperature (its calls name none)"
    return None


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


def _as_noise(
    grade: Grade, pinned: ExpectedIO, fresh: ExpectedIO, sampling: str, upstream_noisy: bool
) -> Grade:
    """A sampled output that differs while the agent did not, and its input did not either (or
    changed only because a sampled agent above it varied): one run cannot tell a regression
    from the model's own variation, so it is not called one."""
    if grade.status in (Status.UNCHANGED, Status.DRIFTED):
        return grade
    if pinned.inputs_hash != fresh.inputs_hash and not upstream_noisy:
        return grade
    if fresh.status == "error" and pinned.status != "error":
        return grade
    return replace(
        grade,
        status=Status.INCONCLUSIVE,
        rationale=f"outputs vary: sampled {sampling} with an unchanged agent and "
        f"input ({grade.rationale}); one run cannot separate this from noise: verify with --replicates",
        judged=False,
        sampling_noise=True,
    )


def _called_models(calls: Sequence[ExpectedIO]) -> list[Any]:
    return [(c.request or {}).get("model") if isinstance(c.request, Mapping) else None for c in calls]


def output_diff(pinned: ExpectedIO, fresh: ExpectedIO) -> str:
    """The unified diff of two calls' outputs, as tier 1 computes it."""
    return str(text_diff(pinned.output, fresh.output)["unified"])


def grade_iteration(
    pinned: ExpectedIO, fresh: ExpectedIO, definition: AgentDefinition, grader: PairGrader | None
) -> Grade:
    """One call against its pinned twin. `grader=None` is hash-only mode."""
    if fresh.status == "error" and pinned.status != "error":
        raised = f"raised: {fresh.error or 'error'}"
        return Grade(Status.REGRESSED, Tier.HASH, raised, output_diff(pinned, fresh))
    same_output = pinned.output_hash == fresh.output_hash
    same_inputs = pinned.inputs_hash == fresh.inputs_hash
    same_tools = pinned.tool_calls_hash == fresh.tool_calls_hash
    if same_output and same_inputs and same_tools:
        return Grade(Status.UNCHANGED, Tier.HASH, "identical")
    if same_output:
        what = " and ".join(
            w for w, same in (("inputs", same_inputs), ("tool calls", same_tools)) if not same
        )
        return Grade(Status.DRIFTED, Tier.HASH, f"{what} changed, output identical")
    if grader is None:
        return Grade(
            Status.INCONCLUSIVE,
            Tier.HASH,
            "output hash differs (hash-only mode: not judged)",
            output_diff(pinned, fresh),
            judged=False,
        )
    return grader(pinned, fresh, definition)


def decisive(grades: Sequence[Grade], *, numbered: bool = True) -> tuple[int, Grade]:
    """(index, grade) of the call that decides an agent's verdict: its worst, the first of
    those; "—" for the rationale when every call is unchanged, and when `numbered` and there
    are several calls, the rationale says which one ("iteration 2/3: ...")."""
    if not grades:
        return 0, Grade(Status.UNCHANGED, Tier.HASH, "—")
    status = worst([g.status for g in grades])
    index = next(i for i, g in enumerate(grades) if g.status == status)
    grade = grades[index]
    if status == Status.UNCHANGED:
        return index, replace(grade, rationale="—")
    if numbered and len(grades) > 1:
        return index, replace(grade, rationale=f"iteration {index + 1}/{len(grades)}: {grade.rationale}")
    return index, grade


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
            missing = f"not called any more (pinned {len(pinned_calls)} call(s))"
            verdicts.append(
                AgentVerdict(
                    name,
                    Grade(Status.MISSING, Tier.HASH, missing),
                    pinned_calls=len(pinned_calls),
                    source_file=definition.source_file,
                )
            )
            continue
        change = change_kind(definition, now.definition, pinned_calls, now.calls)
        common: dict[str, Any] = dict(
            pinned_calls=len(pinned_calls),
            fresh_calls=len(now.calls),
            source_file=definition.source_file,
            fresh_prompt_hash=now.definition.prompt_hash,
            fresh_model_hash=now.definition.model_hash,
        )
        if len(now.calls) != len(pinned_calls):
            counted = f"called {len(now.calls)} time(s), pinned {len(pinned_calls)}"
            verdicts.append(
                AgentVerdict(
                    name, Grade(Status.ITERATION_COUNT_CHANGED, Tier.HASH, counted), change, **common
                )
            )
            continue
        grades = [
            grade_iteration(p, f, definition, grader) for p, f in zip(pinned_calls, now.calls, strict=True)
        ]
        sampling = _sampling(definition, pinned_calls)
        if single_sample and sampling and _same_agent(definition, now.definition, pinned_calls, now.calls):
            upstream_noisy = definition.parent_agent in noisy
            grades = [
                _as_noise(g, p, f, sampling, upstream_noisy)
                for g, p, f in zip(grades, pinned_calls, now.calls, strict=True)
            ]
            if any(g.sampling_noise for g in grades):
                noisy.add(name)
        index, grade = decisive(grades)
        verdicts.append(
            AgentVerdict(
                name,
                grade,
                None if grade.status == Status.UNCHANGED or grade.sampling_noise else change,
                iterations=tuple(g.status for g in grades),
                decisive=index,
                **common,
            )
        )
    for name, now in fresh.items():
        if name not in snapshot.agents and (only is None or name in only):
            verdicts.append(
                AgentVerdict(
                    name,
                    Grade(Status.NEW, Tier.HASH, f"not in the snapshot ({len(now.calls)} call(s))"),
                    DIRECT_EDIT,
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
        if verdict.status != Status.MISSING:
            continue
        parent = snapshot.agents[verdict.agent].parent_agent
        seen: set[str] = set()
        upstream_changed = False
        while parent and parent not in seen:
            seen.add(parent)
            row = by_name.get(parent)
            if row is not None and row.status != Status.UNCHANGED:
                upstream_changed = True
                break
            parent = snapshot.agents[parent].parent_agent if parent in snapshot.agents else None
        label = DOWNSTREAM if upstream_changed else DIRECT_EDIT
        verdicts[index] = replace(verdict, change=label)


def fresh_agents_of_trace(trace: Trace) -> dict[str, FreshAgent]:
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
