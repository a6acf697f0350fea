"""@monitor inside a sweep episode: each agent call is one span of the episode's `spans` column.

poisson_prove never imports proveai: importing this module (which `proveai.capture.monitor`
does, so every `@monitor` user has it) registers `EPISODE_HOOK` with poisson_prove's episode
recorder (`poisson_prove.episode.recording.register_hook`). While an episode records in a
context, proveai's frame holds `EPISODE_FRAME`, so a monitored call made there with no proveai
trace open is recorded into the episode; a trace opened inside the episode records its calls
both in itself (as always: exporters, checks) and into the episode.

Each call is one span (`source: "monitor"`), opened where the call is (the child of the step or
agent call open around it, the parent of what runs inside it: steps, instrumentor spans, other
agents) with the episode's trace id and the agent span's own id, and closed when the call
returns or raises (`status` error, `error` `Type: message`). Its attributes (the names proveai's
OTLP files use):

- `gen_ai.agent.name`, `gen_ai.operation.name`, `proveai.kind`, and when declared
  `gen_ai.request.model`, `proveai.parent_agent`, `proveai.version`;
- `proveai.code_hash` (the function's source), `proveai.model_hash` and `proveai.prompt_hash`
  (the model name and the system prompt a provider sent, null when none was recorded),
  `proveai.output_hash` (not for a call that raised): each `sha256:<hex>` of the value's
  canonical JSON, the hashes a snapshot pins (proveai.snapshot.model), so an episode's call and
  a pinned one compare;
- `proveai.inputs` and `proveai.output` (JSON text) only with `[capture] content = true`;
- `proveai.trace.id` when a proveai trace is open, and once it closes `proveai.check.<name>`:
  the label (good / bad / skip) of each of its checks that names this agent or no agent;
- `proveai.check.<name>` too for each `[capture] checks` entry that applies to this agent,
  run when the call returns on a trace that holds this one call (`call_checks`): a built-in
  (`json_valid`: proveai.assert_json on this agent) or `module:callable` (any proveai check:
  a callable of a trace returning a CheckResult, a label or a bool), `@agent` limiting it to one
  agent's calls. A check that raises, or cannot be imported, labels the call skip. A trace's
  check of the same name, when the trace closes, relabels the call.

Every value is bounded by `[capture] max_observation_bytes`. Generator agents are recorded in a
trace only, not into the episode.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from poisson_prove.episode import recording
from prove_common.jsonio import canonical_json
from proveai.capture.checking import run_check
from proveai.capture.checks import assert_json
from proveai.traces.context import FRAME
from proveai.traces.jsonsafe import to_jsonable
from proveai.traces.trace import Span, Trace

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_time_ns = time.time_ns


def content_hash(value: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of `value`: the hash a snapshot pins."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class _Discard:
    """The builders list of EPISODE_FRAME: an episode's agent spans live in the episode only."""

    __slots__ = ()

    def append(self, builder: Any) -> None:
        pass


class EpisodeRecorder:
    """Records monitored calls into the running episode (the wrappers of capture.monitor call
    `call` / `acall` when their frame's owner has this recorder)."""

    def _open(self, frame: Any, meta: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
              builder_of: Callable[..., Any]) -> tuple[Any, recording.OpenSpan | None]:
        builder = builder_of(frame, meta, meta.bind(args, kwargs))
        span = recording.open_span(meta.name, source="monitor", span_id=builder.span_id)
        if span is not None:
            builder.__dict__["_episode_span"] = span  # the trace's checks label it when it closes
        return builder, span

    def _close(self, builder: Any, span: recording.OpenSpan | None) -> None:
        if span is not None:
            attributes = attributes_of(builder)
            if recording.checks():
                limit = recording.limit()
                for name, label in call_checks(builder, recording.checks()).items():
                    attributes[recording.bounded(f"proveai.check.{name}", limit)] = label
            span.close(attributes, error=builder.error if builder.status == "error" else None)

    def call(self, fn: Callable[..., Any], meta: Any, frame: Any, args: tuple[Any, ...],
             kwargs: dict[str, Any], builder_of: Callable[..., Any]) -> Any:
        if frame is EPISODE_FRAME and recording.current_spans() is None:
            return fn(*args, **kwargs)  # the episode ended in this context (a thread left running)
        builder, span = self._open(frame, meta, args, kwargs, builder_of)
        token = FRAME.set(builder)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            builder._finish_error(exc)
            FRAME.reset(token)
            self._close(builder, span)
            raise
        FRAME.reset(token)
        builder.end_ns = _time_ns()
        builder.output = to_jsonable(result)
        self._close(builder, span)
        return result

    async def acall(self, fn: Callable[..., Any], meta: Any, frame: Any, args: tuple[Any, ...],
                    kwargs: dict[str, Any], builder_of: Callable[..., Any]) -> Any:
        if frame is EPISODE_FRAME and recording.current_spans() is None:
            return await fn(*args, **kwargs)
        builder, span = self._open(frame, meta, args, kwargs, builder_of)
        token = FRAME.set(builder)
        try:
            result = await fn(*args, **kwargs)
        except BaseException as exc:
            builder._finish_error(exc)
            FRAME.reset(token)
            self._close(builder, span)
            raise
        FRAME.reset(token)
        builder._finish_ok(result)
        self._close(builder, span)
        return result


RECORDER = EpisodeRecorder()


class EpisodeFrame:
    """proveai's frame while a sweep episode records and no proveai trace is open."""

    _owner: EpisodeFrame
    _builders = _Discard()
    _span_id = None  # a top-level agent span's parent is the episode's open span, not a trace
    _recorder = RECORDER
    invocation = None

    def __init__(self) -> None:
        self._owner = self

    @property
    def trace_id(self) -> str:
        spans = recording.current_spans()
        return spans.trace_id if spans is not None else ""

    @property
    def span_trace_id(self) -> str:
        return self.trace_id


EPISODE_FRAME = EpisodeFrame()


class EpisodeHook:
    """Registered with poisson_prove's recorder: EPISODE_FRAME is proveai's frame while an
    episode records in this context."""

    def begin(self) -> Any:
        return FRAME.set(EPISODE_FRAME)

    def end(self, token: Any) -> None:
        try:
            FRAME.reset(token)
        except ValueError:  # ended in another context than begun: leave that context's frame
            pass


EPISODE_HOOK = EpisodeHook()
recording.register_hook(EPISODE_HOOK)


def _prompt(builder: Any) -> str | None:
    for message in builder.input_messages or ():
        if isinstance(message, dict) and message.get("role") == "system":
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def attributes_of(builder: Any) -> dict[str, Any]:
    """The stored attributes of one finished agent call (see the module docstring)."""
    meta = builder.meta
    limit = recording.limit()
    attributes: dict[str, Any] = {
        "gen_ai.agent.name": meta.name,
        "gen_ai.operation.name": meta.operation,
        "proveai.kind": meta.kind,
    }
    for key, value in (
        ("gen_ai.request.model", meta.model),
        ("proveai.parent_agent", meta.parent_agent),
        ("proveai.version", meta.version),
        ("proveai.code_hash", meta.code_hash),
    ):
        if value is not None:
            attributes[key] = value
    prompt = _prompt(builder)
    attributes["proveai.model_hash"] = content_hash(meta.model)
    attributes["proveai.prompt_hash"] = None if prompt is None else content_hash(prompt)
    output = getattr(builder, "output", None)
    if builder.status != "error":  # an agent that raised returned nothing to hash
        attributes["proveai.output_hash"] = content_hash(output)
    owner = builder._owner
    if owner is not EPISODE_FRAME:
        attributes["proveai.trace.id"] = owner.trace_id
    if recording.content():
        attributes["proveai.inputs"] = _dumps(builder.inputs)
        attributes["proveai.output"] = _dumps(output)
    if limit is not None:
        attributes = {key: recording.bounded(value, limit) for key, value in attributes.items()}
    return attributes


def label_checks(builders: list[Any], results: list[Any]) -> None:
    """A closed trace's check labels on the episode spans of its agent calls: each result that
    names the span's agent or no agent, as `proveai.check.<name>`."""
    limit = recording.limit()
    for builder in builders:
        span = builder.__dict__.get("_episode_span")
        if span is None:
            continue
        attributes = span.entry["attributes"]
        for result in results:
            if result.agent is None or result.agent == builder.meta.name:
                attributes[recording.bounded(f"proveai.check.{result.name}", limit)] = result.label
        span.resend()


@dataclass(frozen=True)
class _Configured:
    """One `[capture] checks` entry, resolved: what builds the check for an agent."""

    entry: str
    agent: str | None  # the agent after "@", None for every agent
    make: Callable[[str], Any]  # agent name -> the check to run


def _unimportable(entry: str, why: str) -> Callable[[str], Any]:
    def check(trace: Any) -> Any:
        raise LookupError(f"cannot import {entry}: {why}")

    check.__name__ = entry.rsplit(":", 1)[-1]
    return lambda agent: check


def _resolve(entry: str) -> _Configured:
    name, _, agent = entry.partition("@")
    if name == "json_valid":
        return _Configured(entry, agent or None, lambda who: assert_json(who))
    module, _, attribute = name.partition(":")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except Exception as exc:  # a user's module: whatever it raises labels the calls skip
        return _Configured(entry, agent or None, _unimportable(name, f"{type(exc).__name__}: {exc}"))
    return _Configured(entry, agent or None, lambda who: found)


_RESOLVED: dict[tuple[str, ...], tuple[_Configured, ...]] = {}


def call_checks(builder: Any, entries: tuple[str, ...]) -> dict[str, str]:
    """The labels of the `[capture] checks` that apply to one finished agent call: check name
    -> good / bad / skip, each run on a closed trace holding this call alone."""

    configured = _RESOLVED.get(entries)
    if configured is None:
        configured = _RESOLVED[entries] = tuple(_resolve(entry) for entry in entries)
    meta = builder.meta
    applying = [c for c in configured if c.agent is None or c.agent == meta.name]
    if not applying:
        return {}
    end_ns = getattr(builder, "end_ns", 0) or _time_ns()
    trace_id = builder._owner.trace_id
    one = Span(
        trace_id=trace_id, span_id=builder.span_id, parent_span_id=builder.parent_span_id, name=meta.name,
        operation=meta.operation, kind=meta.kind, model=meta.model, version=meta.version,
        parent_agent=meta.parent_agent, description=meta.description, source_file=meta.source_file,
        start_ns=builder.start_ns, end_ns=end_ns, status=builder.status, error=builder.error,
        inputs=builder.inputs, output=getattr(builder, "output", None), input_messages=builder.input_messages,
        output_messages=builder.output_messages, usage=builder.usage, request=builder.request,
        code_hash=meta.code_hash, function=meta.function,
    )
    trace = Trace.closed(
        trace_id=trace_id, name=meta.name, service_name="poisson-prove", spans=[one], invocation=None
    )
    labels: dict[str, str] = {}
    for item in applying:
        check = item.make(meta.name)
        result = run_check(check, trace)
        labels[result.name] = result.label
    return labels


def recording_here() -> bool:
    """Whether a sweep episode records in this context (a trace opened now records into it)."""
    return recording.current_spans() is not None
