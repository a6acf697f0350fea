"""A rollout's own steps, recorded with no OpenTelemetry: `poisson_prove.record` and `step`.

    from poisson_prove import record, step

    def rollout(cfg, seed):
        with step("search", query=cfg["task_id"]) as s:
            hits = search(...)
            s["hits"] = len(hits)          # attributes may be added inside the block
        record("fallback", reason="tool failed")   # an instant step
        ...

Inside a sweep each episode collects its steps (and, with [capture], its OpenTelemetry spans,
and the calls of proveai's `@monitor` agents) into the `spans` column as a JSON list of
{name, start, end, attributes, status, source, parent, span_id, trace_id}. Outside a sweep
both calls do nothing, so a rollout runs unchanged in a plain script. The collector lives in a
ContextVar, so episodes on worker threads never mix their steps.

One trace per episode: every span an episode records carries the episode's `trace_id` (drawn
when its first span needs one, drawn again after the row takes the spans) and a `span_id` of
its own; `parent` is the index of the enclosing span in the list.

The registration points (no recorder is imported here; each registers itself):

- `register_hook(hook)`: `hook.begin()` runs when an episode's recording begins in a context and
  `hook.end(token)` when it ends (proveai's capture makes its `@monitor` calls record into the
  episode this way: proveai.capture.episode).
- `open_span(name, source=..., attributes=...)`: a span opened by any recorder, nested where the
  call is, closed by the handle it returns (`step` is one such recorder).
- `set_context_hook(hook)`: `hook(trace_id, span_id)` makes an open span the current
  OpenTelemetry span and returns what undoes it ([capture]: instrumentor spans nest under it).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

# The byte limit on every stored value ([capture] max_observation_bytes), set per process by
# capture.enable_capture; None: no limit.
_LIMIT: list[int | None] = [None]
# [capture] content: whether recorders may store content (prompts, outputs); set with the limit.
_CONTENT: list[bool] = [False]
# [capture] checks: the proveai checks run on each @monitor call (proveai.capture.episode), set with
# the limit.
_CHECKS: list[tuple[str, ...]] = [()]


def limit() -> int | None:
    """The byte limit on every stored value ([capture] max_observation_bytes), or None."""
    return _LIMIT[0]


def content() -> bool:
    """Whether [capture] content = true: recorders may store what went in and came out."""
    return _CONTENT[0]


def checks() -> tuple[str, ...]:
    """[capture] checks as the spec spells them ("json_valid", "module:callable@agent")."""
    return _CHECKS[0]

_ids = random.Random(os.urandom(16))
os.register_at_fork(after_in_child=lambda: _ids.seed(os.urandom(16)))  # forked children: their own ids
_bits = _ids.getrandbits


def new_span_id() -> str:
    """16 lowercase hex digits, never all zero (an invalid id in OpenTelemetry)."""
    return f"{_bits(64) or 1:016x}"


class EpisodeSpans(list[Any]):
    """One episode's span list, with the episode's trace id (drawn on first use; `clear`, which
    the row calls once it has taken the spans, starts the next episode's trace)."""

    __slots__ = ("_trace_id",)
    streams = False  # a StreamedSpans (episode.stream) sends each span as it is recorded

    def __init__(self) -> None:
        super().__init__()
        self._trace_id: str | None = None

    @property
    def trace_id(self) -> str:
        if self._trace_id is None:
            self._trace_id = f"{_bits(128) or 1:032x}"
        return self._trace_id

    def clear(self) -> None:
        super().clear()
        self._trace_id = None

    def resend(self, index: int) -> None:
        """Nothing: a plain episode's list is read once, when its row is built."""


class EpisodeHook(Protocol):
    """A recorder that wants to know when an episode's recording begins and ends in a context."""

    def begin(self) -> Any: ...  # returns the token `end` gets

    def end(self, token: Any) -> None: ...


# The current episode's span list (None outside an episode) and the open span's index.
_SPANS: ContextVar[EpisodeSpans | None] = ContextVar("poisson_prove_spans", default=None)
_PARENT: ContextVar[int | None] = ContextVar("poisson_prove_parent", default=None)

# In the child process of --episode-timeout, makes each episode's span list one that streams
# its spans to the sweep (span_stream.StreamedSpans); None everywhere else: a plain list.
_STREAMING: list[Callable[[], EpisodeSpans] | None] = [None]
_HOOKS: list[EpisodeHook] = []
# (trace_id, span_id) -> the callable that undoes it: makes an open span OpenTelemetry's current
# span while it is open (capture.enable_capture sets it when instrumentors are on); None: off.
_CONTEXT: list[Callable[[str, str], Callable[[], None]] | None] = [None]


def register_hook(hook: EpisodeHook) -> None:
    """Call `hook.begin()` / `hook.end(token)` around every episode's recording from now on
    (once per hook: registering it again changes nothing)."""
    if hook not in _HOOKS:
        _HOOKS.append(hook)


def set_context_hook(hook: Callable[[str, str], Callable[[], None]] | None) -> None:
    _CONTEXT[0] = hook


def begin_episode() -> tuple[EpisodeSpans, Any]:
    """Start collecting one episode's spans; pass the token to `end_episode`."""
    make = _STREAMING[0]
    spans: EpisodeSpans = EpisodeSpans() if make is None else make()
    token = _SPANS.set(spans)
    if not _HOOKS:
        return spans, (token, ())
    return spans, (token, tuple((hook, hook.begin()) for hook in _HOOKS))


def end_episode(token: Any) -> None:
    spans_token, hooks = token
    for hook, hook_token in reversed(hooks):
        try:
            hook.end(hook_token)
        except Exception:  # a recorder's own failure never ends the sweep
            pass
    _SPANS.reset(spans_token)


def current_spans() -> EpisodeSpans | None:
    """The span list of the episode running in this context, if any (used by [capture])."""
    return _SPANS.get()


def current_parent() -> int | None:
    """The index of the span open in this context (a step, an agent call), if any."""
    return _PARENT.get()


def span_id_at(spans: list[Any], index: int | None) -> str | None:
    """The span id of the span at `index` (None for none, or a span recorded without one)."""
    if index is None or not 0 <= index < len(spans):
        return None
    value = spans[index].get("span_id")
    return value if isinstance(value, str) else None


def bounded(value: Any, limit: int | None) -> Any:
    """`value` with at most `limit` bytes: a string's UTF-8, anything else's compact JSON. A
    longer value is cut (on a character boundary) and ends with "…", all within the limit; a
    list or number too long is stored as its cut JSON text."""
    if limit is None or value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        raw = value.encode("utf-8")
        if len(raw) <= limit:
            return value
        if limit < 4:
            return raw[:limit].decode("utf-8", "ignore")
        return raw[: limit - 3].decode("utf-8", "ignore") + "…"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    return value if len(text.encode("utf-8")) <= limit else bounded(text, limit)


def clean(attributes: MutableMapping[str, Any]) -> dict[str, Any]:
    """Attributes as stored: JSON scalars (and lists of them) as they are, anything else as its
    repr, so recording never fails; each value bounded by max_observation_bytes."""
    limit = _LIMIT[0]
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None or isinstance(value, (str, int, float, bool)):
            out[str(key)] = bounded(value, limit)
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value):
            out[str(key)] = bounded(list(value), limit)
        else:
            out[str(key)] = bounded(repr(value), limit)
    return out



def record(name: str, /, **attributes: Any) -> None:
    """Record an instant step (start == end) with its attributes; a no-op outside a sweep."""
    spans = _SPANS.get()
    if spans is None:
        return
    now = time.time()
    spans.append(
        {
            "name": bounded(str(name), _LIMIT[0]),
            "start": now,
            "end": now,
            "attributes": clean(attributes),
            "status": "ok",
            "source": "step",
            "parent": _PARENT.get(),
            "span_id": new_span_id(),
            "trace_id": spans.trace_id,
        }
    )


def error_text(exc: BaseException) -> str:
    """`Type: message` of an exception, never raising (its own __str__ may)."""
    try:
        message = str(exc)
    except Exception as failed:
        message = f"(its message cannot be shown: str() of it raised {type(failed).__name__})"
    return f"{type(exc).__name__}: {message}"


class OpenSpan:
    """A span open in the running episode (`open_span`): `entry` is its stored dict, `index` its
    place in the episode's list; `close` ends it (once)."""

    __slots__ = ("_parent_token", "_spans", "_undo", "entry", "index")

    def __init__(self, spans: EpisodeSpans, entry: dict[str, Any]) -> None:
        spans.append(entry)
        self._spans = spans
        self.entry = entry
        self.index = len(spans) - 1
        self._parent_token = _PARENT.set(self.index)
        hook = _CONTEXT[0]
        self._undo = None if hook is None else hook(entry["trace_id"], entry["span_id"])

    def close(
        self, attributes: dict[str, Any] | None = None, error: BaseException | str | None = None
    ) -> None:
        """End the span now: its attributes (as stored) when given, `error` when it failed."""
        entry = self.entry
        if entry["end"] is not None:
            return
        if self._undo is not None:
            try:
                self._undo()
            except Exception:  # a context left in another task: OpenTelemetry says so itself
                pass
            self._undo = None
        try:
            _PARENT.reset(self._parent_token)
        except ValueError:  # closed in another context than opened (a generator's consumer)
            pass
        entry["end"] = time.time()
        if attributes is not None:
            entry["attributes"] = attributes
        if error is not None:
            entry["status"] = "error"
            entry["error"] = bounded(error if isinstance(error, str) else error_text(error), _LIMIT[0])
        self.resend()

    def resend(self) -> None:
        """Send the span again as it is now, when the episode's list streams (attributes added)."""
        if self._spans.streams:
            self._spans.resend(self.index)


def open_span(
    name: str,
    /,
    *,
    source: str = "step",
    attributes: dict[str, Any] | None = None,
    span_id: str | None = None,
) -> OpenSpan | None:
    """Open a span in the running episode (None outside one): the child of the span open in
    this context, itself the parent of what is recorded until it closes. `attributes` are
    stored as given (clean them first); a span that streams is sent as it opens, with them."""
    spans = _SPANS.get()
    if spans is None:
        return None
    entry: dict[str, Any] = {
        "name": bounded(str(name), _LIMIT[0]),
        "start": time.time(),
        "end": None,
        "attributes": attributes if attributes is not None else {},
        "status": "ok",
        "source": source,
        "parent": _PARENT.get(),
        "span_id": span_id or new_span_id(),
        "trace_id": spans.trace_id,
    }
    return OpenSpan(spans, entry)


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
    # a streamed span is sent as it opens: with its attributes so far, in case the episode never ends
    span = open_span(name, attributes=clean(attrs) if spans.streams else {})
    assert span is not None  # the episode's list was there a line ago, in this very context
    try:
        yield attrs
    except BaseException as exc:
        span.close(clean(attrs), error=exc)
        raise
    span.close(clean(attrs))
