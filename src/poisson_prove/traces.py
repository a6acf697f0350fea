"""A rollout's own steps, recorded with no OpenTelemetry: `poisson_prove.record` and `step`.

    from poisson_prove import record, step

    def rollout(cfg, seed):
        with step("search", query=cfg["task_id"]) as s:
            hits = search(...)
            s["hits"] = len(hits)          # attributes may be added inside the block
        record("fallback", reason="tool failed")   # an instant step
        ...

Inside a sweep each episode collects its steps (and, with [capture], its OpenTelemetry spans)
into the `spans` column as a JSON list of {name, start, end, attributes, status, source,
parent}. Outside a sweep both calls do nothing, so a rollout runs unchanged in a plain script.
The collector lives in a ContextVar, so episodes on worker threads never mix their steps.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

# The current episode's span list (None outside an episode) and the open step's index.
_SPANS: ContextVar[list[dict[str, Any]] | None] = ContextVar("poisson_prove_spans", default=None)
_PARENT: ContextVar[int | None] = ContextVar("poisson_prove_parent", default=None)


def begin_episode() -> tuple[list[dict[str, Any]], Token[Any]]:
    """Start collecting one episode's spans; pass the token to `end_episode`."""
    spans: list[dict[str, Any]] = []
    return spans, _SPANS.set(spans)


def end_episode(token: Token[Any]) -> None:
    _SPANS.reset(token)


def current_spans() -> list[dict[str, Any]] | None:
    """The span list of the episode running in this context, if any (used by [capture])."""
    return _SPANS.get()


def _clean(attributes: MutableMapping[str, Any]) -> dict[str, Any]:
    # Keep JSON scalars as they are; anything else is stored as its repr so a step never fails.
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None or isinstance(value, (str, int, float, bool)):
            out[str(key)] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value):
            out[str(key)] = list(value)
        else:
            out[str(key)] = repr(value)
    return out


def record(name: str, /, **attributes: Any) -> None:
    """Record an instant step (start == end) with its attributes; a no-op outside a sweep."""
    spans = _SPANS.get()
    if spans is None:
        return
    now = time.time()
    spans.append(
        {
            "name": str(name),
            "start": now,
            "end": now,
            "attributes": _clean(attributes),
            "status": "ok",
            "source": "step",
            "parent": _PARENT.get(),
        }
    )


@contextmanager
def step(name: str, /, **attributes: Any) -> Iterator[dict[str, Any]]:
    """Record the block as a step; yields its attributes dict, which the block may extend.

    An exception leaving the block marks the step `error` (with the exception's type and
    message) and propagates unchanged.
    """
    spans = _SPANS.get()
    attrs: dict[str, Any] = dict(attributes)
    if spans is None:
        yield attrs
        return
    entry: dict[str, Any] = {
        "name": str(name),
        "start": time.time(),
        "end": None,
        "attributes": {},
        "status": "ok",
        "source": "step",
        "parent": _PARENT.get(),
    }
    spans.append(entry)
    token = _PARENT.set(len(spans) - 1)
    try:
        yield attrs
    except BaseException as exc:
        entry["status"] = "error"
        entry["error"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        _PARENT.reset(token)
        entry["end"] = time.time()
        entry["attributes"] = _clean(attrs)


# [capture]: OpenTelemetry instrumentors feeding the same per-episode list ------------------

INSTRUMENTOR_GROUP = "opentelemetry_instrumentor"
_CONTENT_MARKERS = ("prompt", "completion", "content", "message", "input", "output")
_ENABLED: dict[tuple[str, ...], dict[str, str]] = {}


def missing_instrumentors(names: tuple[str, ...] | list[str]) -> dict[str, str]:
    """name -> why it cannot be switched on, for each named instrumentor not installed."""
    from importlib.metadata import entry_points

    installed = {ep.name for ep in entry_points(group=INSTRUMENTOR_GROUP)}
    return {
        name: f"not installed (no {INSTRUMENTOR_GROUP} entry point named {name!r})"
        for name in names
        if name not in installed
    }


def _bounded(value: Any, limit: int | None) -> Any:
    if limit is None:
        return value
    if isinstance(value, str) and len(value.encode("utf-8")) > limit:
        return value.encode("utf-8")[:limit].decode("utf-8", "ignore") + "…"
    if isinstance(value, (list, tuple)):
        return [_bounded(v, limit) for v in value]
    return value


def _episode_span_processor(content: bool, limit: int | None) -> Any:
    """A SpanProcessor appending each finished span to the running episode's list (if any)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class EpisodeSpanProcessor(SpanProcessor):
        def on_end(self, span: Any) -> None:
            spans = _SPANS.get()
            if spans is None:
                return
            attributes = {}
            for key, value in (span.attributes or {}).items():
                if not content and key.startswith("gen_ai.") and any(m in key for m in _CONTENT_MARKERS):
                    continue  # content = false keeps prompts and completions out of the store
                attributes[key] = _bounded(list(value) if isinstance(value, tuple) else value, limit)
            status = getattr(getattr(span, "status", None), "status_code", None)
            spans.append(
                {
                    "name": span.name,
                    "start": span.start_time / 1e9 if span.start_time else None,
                    "end": span.end_time / 1e9 if span.end_time else None,
                    "attributes": attributes,
                    "status": "error" if status is not None and status.name == "ERROR" else "ok",
                    "source": "otel",
                    "parent": None,
                    "span_id": f"{span.context.span_id:016x}",
                    "trace_id": f"{span.context.trace_id:032x}",
                }
            )

    return EpisodeSpanProcessor()


def enable_capture(capture: Mapping[str, Any]) -> dict[str, str]:
    """Switch on the named instrumentors once per process; return name -> why not, for each
    one that could not be switched on (not installed, or failed to instrument)."""
    names = tuple(capture.get("instrument") or ())
    if not names:
        return {}
    if names in _ENABLED:
        return _ENABLED[names]
    from importlib.metadata import entry_points

    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
        provider = trace.get_tracer_provider()
    processor = _episode_span_processor(bool(capture.get("content")), capture.get("max_observation_bytes"))
    provider.add_span_processor(processor)  # type: ignore[union-attr, arg-type]
    missing = missing_instrumentors(names)
    found = {ep.name: ep for ep in entry_points(group=INSTRUMENTOR_GROUP)}
    for name in names:
        if name in missing:
            continue
        try:
            instrumentor = found[name].load()()
            if not getattr(instrumentor, "is_instrumented_by_opentelemetry", False):
                instrumentor.instrument(tracer_provider=provider)
        except Exception as exc:
            missing[name] = f"failed to instrument: {type(exc).__name__}: {exc}"
    _ENABLED[names] = missing
    return missing
