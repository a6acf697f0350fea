"""`verify --override AGENT=PATH`: what-if prompt testing without editing the pipeline.

The file is read as `proveai run --override` reads it (store.artifacts.prompt_override: a
regular file of UTF-8 text; a device or a FIFO is refused unread), and AGENT=PATH is split the
same way (an agent's name may hold `=`).

For each overridden agent, every pinned request (its recorded chat messages, model and
kwargs) is replayed through the provider registry with the system prompt replaced by the
file's text, and the reply is graded against the pinned reply (`direct edit`). A later agent
whose pinned request contains a reply that changed is replayed with the new text substituted
(the replay engine's `substitute`) and graded too (`downstream`). An agent that made no model call
through proveai (plain httpx, a vendor SDK) and whose pinned inputs contain a changed reply is
re-executed by calling its captured function with the new inputs (replay.reinvoke), or graded
inconclusive saying why it could not be. Agents nothing reaches are held at their pinned
output, which the rationale says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from proveai.cache import cached_dispatch
from proveai.diff.verdict import AgentVerdict, Grade, Status, Tier
from proveai.errors import ProveAIError, ProveAIExit
from proveai.providers.base import Provider, as_response
from proveai.replay.engine import substitute
from proveai.replay.reinvoke import NotReinvokable, reinvoke
from proveai.snapshot.grading import DIRECT_EDIT, DOWNSTREAM, Grading, PairGrader, decisive, grade_iteration
from proveai.snapshot.model import AgentDefinition, ExpectedIO, Snapshot, unknown_agent_error
from proveai.store.artifacts import prompt_override, split_override


def parse_overrides(values: Sequence[str]) -> dict[str, Path]:
    """`--override AGENT=PATH` values as {agent: path}; a value without both parts is refused."""
    overrides: dict[str, Path] = {}
    for value in values:
        agent, path = split_override(value)
        overrides[agent] = Path(path)
    return overrides


def read_overrides(snapshot: Snapshot, overrides: Mapping[str, Path]) -> dict[str, str]:
    """Check every AGENT=PATH before anything runs; return agent -> new system prompt."""
    prompts = {}
    for agent, path in overrides.items():
        if agent not in snapshot.agents:
            raise unknown_agent_error(agent, snapshot.agents, f"snapshot {snapshot.name!r}")
        if not any(io.input_messages for io in snapshot.expected(agent)):
            raise ProveAIError(
                f"--override {agent}: the pinned agent made no model call through proveai's providers, "
                "so there is no request to replay",
                suggestions=["call the model through proveai.dispatch(...) inside the agent, then re-pin"],
                exit_code=ProveAIExit.USAGE,
            )
        prompts[agent] = prompt_override(agent, path)["prompt"]
    return prompts


def with_system_prompt(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    return [{"role": "system", "content": prompt}, *rest]


def _dispatch(model: str) -> Provider:
    return cached_dispatch(model)


def replay_call(io: ExpectedIO, definition: AgentDefinition, messages: list[dict[str, Any]]) -> str:
    """Send `messages` with the pinned call's model and kwargs (temperature, seed, ...)."""
    request = dict(io.request or {})
    model = request.pop("model", None) or definition.model
    if not model:
        raise ProveAIError(f"--override: agent {definition.name!r} has no pinned model to replay with")
    try:
        provider = _dispatch(model)
    except ValueError as exc:
        raise ProveAIError(str(exc), exit_code=ProveAIExit.USAGE) from exc
    return as_response(provider.call(messages, model, **request), model).text


def what_if(snapshot: Snapshot, overrides: Mapping[str, Path], grader: PairGrader | None) -> Grading:
    """Overridden agents re-send their pinned requests with the new system prompt; agents
    whose pinned request contained an output that changed re-send it with the new text
    substituted (downstream); the rest keep their pinned output."""
    prompts = read_overrides(snapshot, overrides)
    changes: list[tuple[Any, Any]] = []  # (pinned reply, new reply), in pipeline order
    verdicts = []
    for name, definition in snapshot.agents.items():
        pinned = snapshot.expected(name)
        grades: list[Grade] = []
        for io in pinned:
            if not io.input_messages:
                if changes:  # its model call (if any) went around proveai: call its code again
                    grade = _reinvoked(name, io, definition, changes, grader)
                    if grade is not None:
                        grades.append(grade)
                continue
            messages, fed = (
                substitute([dict(m) for m in io.input_messages], changes)
                if changes
                else (io.input_messages, False)
            )
            if name in prompts:
                messages = with_system_prompt(list(messages), prompts[name])
            elif not fed:
                continue  # nothing it reads changed: held at its pinned output
            try:
                reply = replay_call(io, definition, list(messages))
            except ProveAIError:
                raise
            except Exception as exc:  # the provider failed: this call cannot be judged
                reason = f"replay failed: {type(exc).__name__}: {exc}"
                grades.append(Grade(Status.INCONCLUSIVE, Tier.REPLAY, reason, judged=False))
                continue
            old_reply = io.reply_text if io.reply_text is not None else io.output
            if reply != old_reply:
                changes.insert(0, (old_reply, reply))  # nearest first, as the replay engine does
            old = ExpectedIO(inputs=io.inputs, output=old_reply)
            new = ExpectedIO(inputs=io.inputs, output=reply)
            grades.append(grade_iteration(old, new, definition, grader))
        if not grades:
            held = Grade(Status.UNCHANGED, Tier.HELD, "held at its pinned output (what-if --override)")
            verdicts.append(
                AgentVerdict(
                    name,
                    held,
                    pinned_calls=len(pinned),
                    fresh_calls=len(pinned),
                    source_file=definition.source_file,
                )
            )
            continue
        index, grade = decisive(grades, numbered=False)
        change = DIRECT_EDIT if name in prompts else DOWNSTREAM
        verdicts.append(
            AgentVerdict(
                name,
                grade,
                None if grade.status == Status.UNCHANGED else change,
                pinned_calls=len(pinned),
                fresh_calls=len(grades),
                iterations=tuple(g.status for g in grades),
                decisive=index,
                source_file=definition.source_file,
            )
        )
    return Grading(
        tuple(verdicts),
        notes=(
            "what-if: replayed pinned requests; agents that call no model through proveai are re-invoked "
            "when their inputs changed, else held",
        ),
    )


def _reinvoked(
    name: str,
    io: ExpectedIO,
    definition: AgentDefinition,
    changes: list[tuple[Any, Any]],
    grader: PairGrader | None,
) -> Grade | None:
    """Grade one pinned call of an agent without a captured request whose inputs changed
    upstream, by re-invoking its function; None when nothing it reads changed."""
    inputs, fed = substitute(dict(io.inputs or {}), changes)
    if not fed:
        return None
    recorded = replace(definition, name=name)  # the pinned function, under the agent's name
    try:
        output = reinvoke(recorded, inputs).output
    except NotReinvokable as exc:
        reason = f"inputs changed upstream but not re-executed: {exc}"
        return Grade(Status.INCONCLUSIVE, Tier.REPLAY, reason, judged=False)
    if output != io.output:
        changes.insert(0, (io.output, output))
    old, new = ExpectedIO(inputs=io.inputs, output=io.output), ExpectedIO(inputs=inputs, output=output)
    return grade_iteration(old, new, definition, grader)
