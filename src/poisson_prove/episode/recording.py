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

import json
import time
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

# The byte limit on every stored value ([capture] max_observation_bytes), set per process by
# capture.enable_capture; None: no limit.
_LIMIT: list[int | None] = [None]

# The current episode's span list (None outside an episode) and the open step's index.
_SPANS: ContextVar[list[dict[str, Any]] | None] = ContextVar("poisson_prove_spans", default=None)
_PARENT: ContextVar[int | None] = ContextVar("poisson_prove_parent", default=None)

# In the child process of --episode-timeout, makes each episode's span list one that streams
# its spans to the sweep (span_stream.StreamedSpans); None everywhere else: a plain list.
_STREAMING: list[Callable[[], list[dict[str, Any]]] | None] = [None]


def begin_episode() -> tuple[list[dict[str, Any]], Token[Any]]:
    """Start collecting one episode's spans; pass the token to `end_episode`."""
    make = _STREAMING[0]
    spans: list[dict[str, Any]] = [] if make is None else make()
    return spans, _SPANS.set(spans)


def end_episode(token: Token[Any]) -> None:
    _SPANS.reset(token)


def current_spans() -> list[dict[str, Any]] | None:
    """The span list of the episode running in this context, if any (used by [capture])."""
    return _SPANS.get()


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


def _clean(attributes: MutableMapping[str, Any]) -> dict[str, Any]:
    # Keep JSON scalars as they are; anything else is stored as its repr so a step never fails.
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
        "name": bounded(str(name), _LIMIT[0]),
        "start": time.time(),
        "end": None,
        "attributes": {},
        "status": "ok",
        "source": "step",
        "parent": _PARENT.get(),
    }
    streamed = spans.__class__ is not list
    if streamed:  # sent as it opens: with its attributes so far, in case the episode never ends
        entry["attributes"] = _clean(dict(attrs))
    spans.append(entry)
    index = len(spans) - 1
    token = _PARENT.set(index)
    try:
        yield attrs
    except BaseException as exc:
        entry["status"] = "error"
        entry["error"] = bounded(f"{type(exc).__name__}: {exc}", _LIMIT[0])
        raise
    finally:
        _PARENT.reset(token)
        entry["end"] = time.time()
        entry["attributes"] = _clean(attrs)
        if streamed:
            spans.resend(index)  # type: ignore[attr-defined]
