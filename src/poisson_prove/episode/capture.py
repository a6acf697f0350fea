"""[capture]: OpenTelemetry instrumentors feeding each episode's spans, keeping only what is
promised.

- `probe_instrumentors(names)` checks, in a child process, that each named instrumentor is
  installed, loads, has its dependencies and really instruments; the plan, the done line and
  the manifest name every one that does not, with the reason.
- `enable_capture(capture)` switches them on once per process with a span processor that
  appends each finished span of the running episode to its list (`source: "otel"`); under a
  lock, so the threads of a worker (Dask, a pool) that start together add one processor and
  instrument once.
- A name that is no entry point gets the entry point it was probably meant as (a package's
  name, `openai-v2` or `opentelemetry-instrumentation-openai-v2`, gives its entry point
  `openai`; a near miss gives the closest) and the list of those installed.
- With `content = false` (the default) a span keeps only the attributes in `ALLOWED` (timings
  are the span's own start and end): names, methods, status codes, hosts and paths, token counts,
  model names. A URL is kept without its query, fragment or user info. Everything else (prompts,
  completions, system instructions, tool arguments and results, request and response bodies,
  under any convention) is left out; span events and status descriptions are never stored.
- `max_observation_bytes` bounds every stored value, these and those of `record()`/`step()`
  (recording.bounded).
- One trace per episode: while instrumentors are on, each open step (and each `@monitor` call
  recorded into the episode) is OpenTelemetry's current span, so an instrumentor's span is its
  child in the episode's trace; a span started with none open gets the episode's trace id from
  the provider's id generator (`EpisodeIds`). The stored entry's `parent` is the index of its
  real parent in the episode's list (a step, an agent call, or another instrumentor span, which
  ends after its children and links them when it arrives).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from poisson_prove.episode import recording
from prove_common.suggest import did_you_mean

INSTRUMENTOR_GROUP = "opentelemetry_instrumentor"

# content = false: the attributes kept, by exact key or (ending in ".") by prefix.
ALLOWED = frozenset(
    {
        # HTTP, old and current semantic conventions
        "http.method", "http.request.method", "http.status_code", "http.response.status_code",
        "http.scheme", "http.host", "http.flavor", "http.route", "http.url", "http.target",
        "url.full", "url.scheme", "url.path", "server.address", "server.port", "net.peer.name",
        "net.peer.port", "network.protocol.version", "error.type", "exception.type",
        "http.request.resend_count",
        # generative AI: who, which model, how many tokens, how it ended
        "gen_ai.system", "gen_ai.provider.name", "gen_ai.operation.name", "gen_ai.request.model",
        "gen_ai.response.model", "gen_ai.response.id", "gen_ai.response.finish_reasons",
        "gen_ai.request.max_tokens", "gen_ai.request.temperature", "gen_ai.request.top_p",
        "gen_ai.request.seed", "gen_ai.request.choice.count", "gen_ai.output.type",
        "gen_ai.tool.name", "gen_ai.tool.type", "gen_ai.tool.call.id", "gen_ai.agent.name",
        "gen_ai.agent.id", "gen_ai.openai.request.service_tier", "gen_ai.openai.response.service_tier",
        "gen_ai.usage.", "llm.token_count.", "llm.model_name", "llm.provider", "llm.system",
        # chaos faults Prove injected itself
        "chaos.",
    }
)
_PREFIXES = tuple(key for key in ALLOWED if key.endswith("."))
_URL_KEYS = frozenset({"http.url", "url.full"})
_SETTINGS: dict[str, Any] = {"content": False, "limit": None}
_ENABLED: dict[tuple[str, ...], dict[str, str]] = {}
_ENABLING = threading.Lock()  # held while instrumentors are switched on (see enable_capture)
INSTRUMENTATION_PREFIX = "opentelemetry-instrumentation-"


def allowed(key: str) -> bool:
    return key in ALLOWED or key.startswith(_PREFIXES)


def _without_query(value: Any, *, path_only: bool = False) -> Any:
    if not isinstance(value, str):
        return value
    parts = urlsplit(value)
    if path_only:
        return parts.path
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def kept_attributes(attributes: Mapping[str, Any], content: bool, limit: int | None) -> dict[str, Any]:
    """The attributes of one span as stored: all of them with content, else the allow-list."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if isinstance(value, tuple):
            value = list(value)
        if not content:
            if not allowed(key):
                continue
            if key in _URL_KEYS:
                value = _without_query(value)
            elif key == "http.target":
                value = _without_query(value, path_only=True)
        out[key] = recording.bounded(value, limit)
    return out


def _index_of(spans: list[Any], span_id: str) -> int | None:
    for index in range(len(spans) - 1, -1, -1):
        if spans[index].get("span_id") == span_id:
            return index
    return None


def append_otel_span(spans: recording.EpisodeSpans, span: Any) -> None:
    """Store one finished OpenTelemetry span in the episode's list, linked to its parent: the
    entry at the parent's span id if it is there (a step, an agent call, an instrumentor span
    already ended), else `parent_span_id` waits for that span, which links it when it ends."""
    limit = _SETTINGS["limit"]
    status = getattr(getattr(span, "status", None), "status_code", None)
    span_id = f"{span.context.span_id:016x}"
    parent_context = getattr(span, "parent", None)
    parent_id = f"{parent_context.span_id:016x}" if parent_context is not None else None
    parent = None if parent_id is None else _index_of(spans, parent_id)
    entry: dict[str, Any] = {
        "name": recording.bounded(span.name, limit),
        "start": span.start_time / 1e9 if span.start_time else None,
        "end": span.end_time / 1e9 if span.end_time else None,
        "attributes": kept_attributes(span.attributes or {}, _SETTINGS["content"], limit),
        "status": "error" if status is not None and status.name == "ERROR" else "ok",
        "source": "otel",
        "parent": parent,
        "span_id": span_id,
        "trace_id": f"{span.context.trace_id:032x}",
    }
    if parent is None and parent_id is not None:
        entry["parent_span_id"] = parent_id  # its parent has not ended yet (or is not ours)
    spans.append(entry)
    index = len(spans) - 1
    for earlier in range(index - 1, -1, -1):  # children that ended first wait for this span
        child = spans[earlier]
        if child.get("parent_span_id") == span_id and child.get("parent") is None:
            child["parent"] = index
            del child["parent_span_id"]
            spans.resend(earlier)


def _episode_span_processor() -> Any:
    """A SpanProcessor appending each finished span to the running episode's list (if any)."""
    from opentelemetry.sdk.trace import SpanProcessor  # opentelemetry: ~75 ms, only when [capture] is on

    class EpisodeSpanProcessor(SpanProcessor):
        def on_end(self, span: Any) -> None:
            spans = recording.current_spans()
            if spans is not None:
                append_otel_span(spans, span)

    return EpisodeSpanProcessor()


def _episode_ids(inner: Any) -> Any:
    """The provider's id generator, giving a span started with no parent the running episode's
    trace id (any other span keeps its parent's; outside an episode: `inner`'s ids)."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator  # opentelemetry: only when [capture] is on

    class EpisodeIds(IdGenerator):
        def __init__(self) -> None:
            self.inner = inner

        def generate_span_id(self) -> int:
            return int(self.inner.generate_span_id())

        def generate_trace_id(self) -> int:
            spans = recording.current_spans()
            if spans is None:
                return int(self.inner.generate_trace_id())
            return int(spans.trace_id, 16)

    return EpisodeIds()


def _context_hook() -> Any:
    """recording's context hook: an open step or agent call as OpenTelemetry's current span."""
    # opentelemetry: ~75 ms, only when [capture] is on
    from opentelemetry import context, trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags  # opentelemetry: as above

    sampled = TraceFlags(TraceFlags.SAMPLED)
    attach, detach, in_context = context.attach, context.detach, trace.set_span_in_context

    def make_current(trace_id: str, span_id: str) -> Any:
        span = NonRecordingSpan(SpanContext(int(trace_id, 16), int(span_id, 16), False, sampled))
        token = attach(in_context(span))
        return lambda: detach(token)

    return make_current


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _meant(name: str, installed: Mapping[str, Any]) -> str | None:
    """The installed entry point `name` was probably meant as: the one its package provides
    (by the package's name, with or without `opentelemetry-instrumentation-`), else the
    closest name."""
    wanted = _normalized(name).removeprefix(INSTRUMENTATION_PREFIX)
    by_package = []
    for entry_name, entry in installed.items():
        dist = getattr(entry, "dist", None)
        package = _normalized(getattr(dist, "name", "") or "").removeprefix(INSTRUMENTATION_PREFIX)
        if package and package == wanted:
            by_package.append(entry_name)
    if by_package:  # a package with several (httpx gives httpx and httpx2): the nearest name
        return min(by_package, key=lambda n: (n not in wanted, len(n), n))
    close = did_you_mean(wanted, installed)
    return close.split('"')[1] if close else None


def not_installed(name: str, installed: Mapping[str, Any]) -> str:
    """Why `name` cannot be switched on when no entry point has that name: with the name it was
    probably meant as, and what is installed."""
    names = ", ".join(sorted(installed)) or "none"
    meant = _meant(name, installed)
    hint = f', did you mean "{meant}"?' if meant else ""
    return f"not installed (no {INSTRUMENTOR_GROUP} entry point named {name!r}{hint}; installed: {names})"


_INSTALLED: dict[tuple[str, ...], dict[str, Any]] = {}  # sys.path -> its instrumentors' entry points


def installed_instrumentors() -> dict[str, Any]:
    """name -> entry point, for each instrumentor installed on the current `sys.path`; read once
    per path (a sweep without [capture] instrument never reads them)."""
    where = tuple(sys.path)
    found = _INSTALLED.get(where)
    if found is None:
        # importlib.metadata (~20 ms with email, zipfile, csv): only when instrumentors are named
        from importlib.metadata import entry_points

        found = _INSTALLED[where] = {ep.name: ep for ep in entry_points(group=INSTRUMENTOR_GROUP)}
    return found


def missing_instrumentors(names: tuple[str, ...] | list[str]) -> dict[str, str]:
    """name -> why it cannot be switched on, for each named instrumentor not installed."""
    installed = installed_instrumentors()
    return {name: not_installed(name, installed) for name in names if name not in installed}


def _instrument(name: str, entry: Any, provider: Any) -> str | None:
    """Switch one instrumentor on; the reason it did not switch on, or None."""
    try:
        instrumentor = entry.load()()
    except Exception as exc:
        return f"fails to load: {type(exc).__name__}: {exc}"
    if getattr(instrumentor, "is_instrumented_by_opentelemetry", False):
        return None
    try:
        # opentelemetry: ~75 ms, only when [capture] is on
        from opentelemetry.instrumentation.dependencies import get_dependency_conflicts

        conflict = get_dependency_conflicts(instrumentor.instrumentation_dependencies())
    except Exception:  # an instrumentor without the usual base class: instrument() tells
        conflict = None
    if conflict is not None:
        return f"failed to instrument: {conflict}"
    try:
        instrumentor.instrument(tracer_provider=provider)
    except Exception as exc:
        return f"failed to instrument: {type(exc).__name__}: {exc}"
    if not getattr(instrumentor, "is_instrumented_by_opentelemetry", True):
        return "failed to instrument: it did not switch on (see its log message)"
    return None


def enable_capture(capture: Mapping[str, Any]) -> dict[str, str]:
    """Apply `capture` in this process (content, byte limit) and switch on its instrumentors
    once; return name -> why not, for each one that could not be switched on."""
    limit = capture.get("max_observation_bytes")
    recording._LIMIT[0] = limit
    recording._CONTENT[0] = bool(capture.get("content"))
    recording._CHECKS[0] = tuple(capture.get("checks") or ())
    _SETTINGS.update(content=bool(capture.get("content")), limit=limit)
    names = tuple(capture.get("instrument") or ())
    if not names:
        return {}
    if names in _ENABLED:
        return _ENABLED[names]
    # Two threads of one worker start their first episodes together: without the lock both
    # would add a span processor (every span stored twice) and instrument twice.
    with _ENABLING:
        if names not in _ENABLED:
            _ENABLED[names] = _switch_on(names)
    return _ENABLED[names]


def _switch_on(names: tuple[str, ...]) -> dict[str, str]:
    from opentelemetry import trace  # opentelemetry: ~75 ms, only when [capture] is on
    from opentelemetry.sdk.trace import TracerProvider  # opentelemetry: ~75 ms, only when [capture] is on

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    if not _ENABLED:  # one processor per process; it reads _SETTINGS
        provider.add_span_processor(_episode_span_processor())  # type: ignore[attr-defined]
        provider.id_generator = _episode_ids(provider.id_generator)  # type: ignore[attr-defined]
        recording.set_context_hook(_context_hook())
    missing = missing_instrumentors(names)
    found = installed_instrumentors()
    for name in names:
        if name not in missing:
            why = _instrument(name, found[name], provider)
            if why is not None:
                missing[name] = why
    return {name: missing[name] for name in names if name in missing}  # spec order


def probe_instrumentors(names: tuple[str, ...] | list[str], *, timeout: float = 120) -> dict[str, str]:
    """name -> why not, for each named instrumentor that does not switch on, checked in a child
    process (so the sweep's own process is left as it was; the import of user code is not
    involved). A probe that itself fails names every instrumentor with the reason."""
    if not names:
        return {}
    command = [sys.executable, "-m", "poisson_prove.episode.capture", *names]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
        )
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        return {name: f"could not be checked ({type(exc).__name__})" for name in names}
    return {str(k): str(v) for k, v in answer.items()}


def short_reason(why: str) -> str:
    """`not installed`, `fails to load` or `failed to instrument`: the plan line's words."""
    return why.split(" (", 1)[0].split(":", 1)[0]


def plan_reason(why: str) -> str:
    """What the plan says of an instrumentor that will not switch on: `not installed: no spans`,
    with `; did you mean "openai"?` for a name no entry point has but one is close to (the done
    line and the manifest give the whole reason, with the names installed)."""
    text = f"{short_reason(why)}: no spans"
    meant = re.search(r'did you mean "[^"]+"\?', why)
    return f"{text}; {meant.group(0)}" if meant else text


def installed_named(why: str) -> str | None:
    """The installed instrumentors a `not installed` reason lists (`httpx, openai`), else None."""
    found = re.search(r"; installed: ([^;]*)\)$", why)
    return found.group(1) if found else None


if __name__ == "__main__":  # the probe's child: print {name: why not} as one JSON line
    import logging

    logging.disable(logging.CRITICAL)  # an instrumentor's own log lines are not the answer
    result = enable_capture({"instrument": sys.argv[1:], "max_observation_bytes": 1})
    sys.stdout.write(json.dumps(result) + "\n")
