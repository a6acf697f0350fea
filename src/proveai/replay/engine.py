"""Replay: re-send captured model requests (with overrides) and propagate new outputs downstream.

A span is re-executed live when it captured the chat request its agent sent through
proveai's providers (input_messages), or when an override asks for it. A span without a
captured request whose inputs changed upstream (an agent calling its model some other way)
is re-executed by re-invoking its captured function with the new inputs (replay.reinvoke);
when that is impossible it keeps its recorded output and `note` says why.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from proveai.cache import CachedProvider, ResponseCache, default_cache, dispatch_cached
from proveai.diff.verdict import EdgeVerdict
from proveai.errors import ProveAIError
from proveai.providers.base import Provider
from proveai.replay.reinvoke import NotReinvokable, reinvoke
from proveai.traces.topology import bfs_order, graph_parents
from proveai.traces.trace import Span, Trace

MESSAGE_OVERRIDE_KEYS = ("model", "prompt", "messages")
MIN_SUBSTRING_CHARS = 3  # shorter outputs are substituted only where they are a whole value


@dataclass(frozen=True)
class ReplayedSpan:
    """One span after replay. `live` False means the recorded output was kept (`note` says why)."""

    span_id: str
    agent: str
    new_output: Any
    model: str | None
    latency_ms: float
    messages_sent: tuple[dict[str, Any], ...] = ()
    cached: bool = False
    live: bool = True
    old_output: Any = None
    inputs: dict[str, Any] = field(default_factory=dict)
    inputs_changed: bool = False
    usage: dict[str, int] = field(default_factory=dict)
    note: str | None = None
    held: str | None = None  # None when live; "selection" (counterfactual/hold-at) or "no_request"
    reinvoked: bool = False  # re-executed by calling the captured function, not by re-sending

    def to_dict(self) -> dict[str, Any]:
        return {
            "span_id": self.span_id,
            "agent": self.agent,
            "model": self.model,
            "live": self.live,
            "cached": self.cached,
            "latency_ms": round(self.latency_ms, 3),
            "inputs_changed": self.inputs_changed,
            "inputs": dict(self.inputs),
            "note": self.note,
            "held": self.held,
            "reinvoked": self.reinvoked,
            "messages_sent": list(self.messages_sent),
            "old_output": self.old_output,
            "new_output": self.new_output,
            "usage": dict(self.usage),
        }


@dataclass
class ReplayedTrace:
    """A trace's replay: one ReplayedSpan per span (BFS order); attribute_edges fills edge_verdicts."""

    trace_id: str
    replayed_spans: list[ReplayedSpan]
    edge_verdicts: list[EdgeVerdict] = field(default_factory=list)
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)

    def span(self, span_id: str) -> ReplayedSpan | None:
        return next((r for r in self.replayed_spans if r.span_id == span_id), None)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(r.model for r in self.replayed_spans if r.model))


# ---- building the request ----------------------------------------------------------------------

def _recorded_kwargs(span: Span) -> dict[str, Any]:
    request = span.request or {}
    if isinstance(request.get("kwargs"), dict):
        return dict(request["kwargs"])
    return {k: v for k, v in request.items() if k not in ("model", "messages", "provider", "base_url")}


def _render_inputs(inputs: Mapping[str, Any]) -> str:
    if len(inputs) == 1:
        (value,) = inputs.values()
        if isinstance(value, str):
            return value
    return json.dumps(dict(inputs), ensure_ascii=False, sort_keys=True, default=str)


def build_request(
    span: Span,
    override: Mapping[str, Any] | None = None,
    messages: Sequence[Mapping[str, Any]] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], str, dict[str, Any], str | None]:
    """(messages, model, kwargs, note) for re-sending `span` with `override` applied.

    `messages`/`inputs` replace the captured ones (after upstream substitution). Without
    captured messages the request is synthesized: the override's prompt as system message
    and the inputs (a lone string as-is, else JSON) as the user message.
    """
    override = dict(override or {})
    note = None
    if "messages" in override:
        sent = [dict(m) for m in override["messages"]]
    elif messages is not None or span.input_messages:
        sent = [dict(m) for m in (messages if messages is not None else span.input_messages or ())]
    else:
        sent = [{"role": "user", "content": _render_inputs(inputs if inputs is not None else span.inputs)}]
        note = "request synthesized from the span's inputs (no captured messages)"
    if "prompt" in override and "messages" not in override:
        prompt = str(override["prompt"])
        if sent and sent[0].get("role") == "system":
            sent[0] = {**sent[0], "content": prompt}
        else:
            sent.insert(0, {"role": "system", "content": prompt})
    model = override.get("model") or span.model or (span.request or {}).get("model")
    if not model:
        raise ProveAIError(
            f"span {span.span_id} ({span.name}) recorded no model, so it cannot be re-sent",
            suggestions=(f"give one: override {{'model': ...}} for agent {span.name!r}",),
        )
    kwargs = _recorded_kwargs(span)
    kwargs.update({k: v for k, v in override.items() if k not in MESSAGE_OVERRIDE_KEYS})
    return sent, str(model), kwargs, note


def _resolve_provider(model: str, provider: Provider | None, cache: ResponseCache | None) -> CachedProvider:
    chosen = provider if provider is not None else dispatch_cached(model)
    if isinstance(chosen, CachedProvider):
        return chosen
    return CachedProvider(chosen, cache if cache is not None else default_cache())


def replay_span(
    span: Span,
    override: Mapping[str, Any] | None = None,
    provider: Provider | None = None,
    *,
    cache: ResponseCache | None = None,
    messages: Sequence[Mapping[str, Any]] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> ReplayedSpan:
    """Re-send one captured span's request, with `override` (model, prompt, messages, kwargs).

    Routes through dispatch(model) unless `provider` is given, always behind a CachedProvider
    (the default cache unless `cache`). Raises ValueError when no provider serves the model.
    """
    sent, model, kwargs, note = build_request(span, override, messages, inputs)
    resolved = _resolve_provider(model, provider, cache)
    started = time.perf_counter()
    response = resolved.call(sent, model, **kwargs)
    latency_ms = (time.perf_counter() - started) * 1000
    text = getattr(response, "text", response)
    # The agent may post-process its model's reply; when the reply is the recorded one, so is
    # the output (the same code ran on the same text).
    new_output = span.output if text == recorded_reply(span) else text
    return ReplayedSpan(
        span_id=span.span_id,
        agent=span.name,
        new_output=new_output,
        model=model,
        latency_ms=latency_ms,
        messages_sent=tuple(sent),
        cached=bool(getattr(response, "cached", False)),
        live=True,
        old_output=span.output,
        inputs=dict(inputs if inputs is not None else span.inputs),
        usage=dict(getattr(response, "usage", {}) or {}),
        note=note,
    )


def recorded_reply(span: Span) -> str | None:
    """The text of the model reply the span recorded (its last assistant message), if any."""
    for message in reversed(span.output_messages or ()):
        if message.get("role", "assistant") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    return None


# ---- substitution ----------------------------------------------------------------------------

def _text_forms(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    forms = [
        json.dumps(value, ensure_ascii=False, default=str),
        json.dumps(value, ensure_ascii=False, indent=2, default=str),
    ]
    if isinstance(value, dict | list):
        forms.append(str(value))
    return list(dict.fromkeys(forms))


def _new_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def substitute(value: Any, changes: Sequence[tuple[Any, Any]]) -> tuple[Any, bool]:
    """`value` with each old output replaced by its new one: whole values when equal, and inside
    strings wherever the old output's text occurs verbatim (if at least 3 characters)."""
    for old, new in changes:
        if value == old and not isinstance(value, bool) and value not in (None, "", [], {}):
            return new, True
    if isinstance(value, str):
        changed = False
        for old, new in changes:
            for form in _text_forms(old):
                if len(form) >= MIN_SUBSTRING_CHARS and form in value:
                    value = value.replace(form, _new_text(new))
                    changed = True
                    break
        return value, changed
    if isinstance(value, dict):
        out, any_changed = {}, False
        for key, item in value.items():
            out[key], changed = substitute(item, changes)
            any_changed |= changed
        return out, any_changed
    if isinstance(value, list):
        items = [substitute(item, changes) for item in value]
        return [i for i, _ in items], any(c for _, c in items)
    return value, False


# ---- the trace walk ---------------------------------------------------------------------------

def _names(values: Iterable[str] | str | None) -> set[str]:
    if values is None:
        return set()
    if isinstance(values, str):
        values = values.split(",")
    return {v.strip() for v in values if v and v.strip()}


def replay_trace(
    trace: Trace,
    overrides_by_agent: Mapping[str, Mapping[str, Any]] | None = None,
    provider: Provider | None = None,
    *,
    counterfactual: Iterable[str] | str | None = None,
    hold_at: Iterable[str] | str | None = None,
    propagate: bool = False,
    cache: ResponseCache | None = None,
    reinvoke: bool = True,
) -> ReplayedTrace:
    """Replay every span parent-first, substituting new parent outputs into children's inputs.

    counterfactual (agent names) / hold_at (span ids): only those run live, every other span
    keeps its recorded output — unless `propagate`, when a held span whose inputs changed is
    re-executed with the substituted inputs. An explicit prompt/messages override for an agent
    suppresses substitution into it. `reinvoke` False never calls a captured function.
    """
    overrides = {name: dict(o) for name, o in (overrides_by_agent or {}).items()}
    live_agents, live_spans = _names(counterfactual), _names(hold_at)
    selective = bool(live_agents or live_spans)
    parents = graph_parents(trace)
    done: dict[str, ReplayedSpan] = {}
    spans_by_id = {s.span_id: s for s in trace.spans}
    for span in bfs_order(trace, parents):
        override = overrides.get(span.name, {})
        explicit = "prompt" in override or "messages" in override
        changes = _upstream_changes(span, parents.get(span.span_id), done, spans_by_id)
        new_inputs, new_messages = dict(span.inputs), span.input_messages
        inputs_changed = False
        if changes and not explicit:
            new_inputs, changed_in = substitute(dict(span.inputs), changes)
            changed_msgs = False
            if span.input_messages:
                new_messages, changed_msgs = substitute([dict(m) for m in span.input_messages], changes)
            inputs_changed = changed_in or changed_msgs
        selected = not selective or span.name in live_agents or span.span_id in live_spans
        can_resend = bool(span.input_messages) or bool(override)
        if (selected and can_resend) or (selective and propagate and inputs_changed and can_resend):
            done[span.span_id] = replay_span(
                span,
                override,
                provider,
                cache=cache,
                messages=new_messages if span.input_messages else None,
                inputs=new_inputs,
            )
            if inputs_changed:
                done[span.span_id] = _with(done[span.span_id], inputs_changed=True)
            continue
        if not selected:
            held, note = "selection", "held at the recorded output (not selected for live replay)"
        else:
            held, note = "no_request", "no captured model request to re-send; recorded output kept"
        wanted = selected or (selective and propagate)
        if wanted and inputs_changed and not can_resend:
            rerun, note = _reinvoked(span, new_inputs, reinvoke)
            if rerun is not None:
                done[span.span_id] = rerun
                continue
            held = "no_request"
        done[span.span_id] = ReplayedSpan(
            span_id=span.span_id,
            agent=span.name,
            new_output=span.output,
            model=span.model,
            latency_ms=0.0,
            live=False,
            old_output=span.output,
            inputs=new_inputs,
            inputs_changed=inputs_changed,
            note=note,
            held=held,
        )
    ordered = [done[s.span_id] for s in bfs_order(trace, parents)]
    return ReplayedTrace(trace_id=trace.trace_id, replayed_spans=ordered, overrides=overrides)


def _reinvoked(span: Span, inputs: dict[str, Any], allowed: bool) -> tuple[ReplayedSpan | None, str]:
    """(the re-executed span, note), or (None, why it could not be re-executed)."""
    if not allowed:
        return None, "not re-executed (re-invoking captured functions is turned off); recorded output kept"
    try:
        result = reinvoke(span, inputs)
    except NotReinvokable as exc:
        return None, f"not re-executed: {exc}; recorded output kept"
    note = f"re-executed by calling {result.function} with the new inputs (no captured model request)"
    replayed = ReplayedSpan(
        span_id=span.span_id,
        agent=span.name,
        new_output=result.output,
        model=span.model,
        latency_ms=result.latency_ms,
        live=True,
        old_output=span.output,
        inputs=inputs,
        inputs_changed=True,
        note=note,
        reinvoked=True,
    )
    return replayed, note


def _with(replayed: ReplayedSpan, **changes: Any) -> ReplayedSpan:
    return replace(replayed, **changes)


def _upstream_changes(
    span: Span, parent: Span | None, done: Mapping[str, ReplayedSpan], spans_by_id: Mapping[str, Span]
) -> list[tuple[Any, Any]]:
    """(old, new) outputs of already-replayed spans that could feed `span`: its graph parent and
    every span that ended before it started; nearest first."""
    candidates = []
    for span_id, replayed in done.items():
        source = spans_by_id[span_id]
        feeds = (parent is not None and span_id == parent.span_id) or source.end_ns <= span.start_ns
        if feeds and replayed.new_output != replayed.old_output:
            candidates.append((source.end_ns, replayed.old_output, replayed.new_output))
    candidates.sort(key=lambda c: -c[0])
    return [(old, new) for _, old, new in candidates]
