"""`verify --override AGENT=PATH`: what-if prompt testing without editing the pipeline.

For each overridden agent, every pinned request (its recorded chat messages) is replayed
through the provider registry with the system prompt replaced by the file's text; the reply
is graded against the pinned reply. Other agents are not re-executed: they are reported
unchanged (held at their pinned output), which the rationale says.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from proveai.errors import EXIT_USAGE, ProveAIError
from proveai.snapshot.grading import (
    DIRECT_EDIT,
    INCONCLUSIVE,
    UNCHANGED,
    AgentVerdict,
    Grading,
    PairGrade,
    grade_iteration,
    worst,
)
from proveai.snapshot.model import AgentDefinition, ExpectedIO, Snapshot, unknown_agent_error


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
                exit_code=EXIT_USAGE,
            )
        try:
            prompts[agent] = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ProveAIError(f"--override {agent}={path}: cannot read the file ({exc.strerror})") from exc
    return prompts


def with_system_prompt(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    return [{"role": "system", "content": prompt}, *rest]


def _dispatch(model: str) -> Any:
    try:
        from proveai.cache import cached_dispatch

        return cached_dispatch(model)
    except ImportError:
        from proveai.providers import dispatch

        return dispatch(model)


def replay_call(io: ExpectedIO, definition: AgentDefinition, prompt: str) -> str:
    from proveai.providers.base import as_response

    model = definition.model
    if not model:
        raise ProveAIError(f"--override {definition.name}: the pinned agent has no model to replay with")
    messages = with_system_prompt(list(io.input_messages or []), prompt)
    try:
        provider = _dispatch(model)
    except ValueError as exc:
        raise ProveAIError(str(exc), exit_code=EXIT_USAGE) from exc
    return as_response(provider.call(messages, model), model).text


def what_if(snapshot: Snapshot, overrides: Mapping[str, Path], grader: Any) -> Grading:
    prompts = read_overrides(snapshot, overrides)
    verdicts = []
    for name, definition in snapshot.agents.items():
        pinned = snapshot.expected(name)
        if name not in prompts:
            verdicts.append(
                AgentVerdict(
                    name,
                    UNCHANGED,
                    None,
                    "held at its pinned output (what-if --override)",
                    tier="held",
                    pinned_calls=len(pinned),
                    fresh_calls=len(pinned),
                    source_file=definition.source_file,
                )
            )
            continue
        new_definition = AgentDefinition(**{**definition.__dict__, "prompt": prompts[name]})
        grades: list[PairGrade] = []
        for io in pinned:
            if not io.input_messages:
                continue
            try:
                reply = replay_call(io, definition, prompts[name])
            except ProveAIError:
                raise
            except Exception as exc:  # the provider failed: this agent cannot be judged
                grades.append(
                    PairGrade(INCONCLUSIVE, f"replay failed: {type(exc).__name__}: {exc}", "replay", False)
                )
                continue
            old = ExpectedIO(
                inputs=io.inputs, output=io.reply_text if io.reply_text is not None else io.output
            )
            new = ExpectedIO(inputs=io.inputs, output=reply)
            grades.append(grade_iteration(old, new, new_definition, grader))
        status = worst([g.status for g in grades])
        decisive = next((g for g in grades if g.status == status), None)
        verdicts.append(
            AgentVerdict(
                name,
                status,
                None if status == UNCHANGED else DIRECT_EDIT,
                decisive.rationale if decisive and status != UNCHANGED else "—",
                tier=decisive.tier if decisive else "hash",
                pinned_calls=len(pinned),
                fresh_calls=len(grades),
                iterations=tuple(g.status for g in grades),
                source_file=definition.source_file,
            )
        )
    return Grading(tuple(verdicts), notes=("what-if: downstream agents were not re-executed",))
