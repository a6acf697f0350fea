"""The three mocks: from_trace (recorded replies), responses (scripted), failure (errors)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from proveai.mock._registry import MockProvider
from proveai.providers.base import Message, ProviderError, ProviderResponse, as_response
from proveai.providers.registry import registrations
from proveai.store.traces.load import load_trace
from proveai.traces.trace import Trace

FAILURE_KINDS = ("timeout", "rate_limit", "malformed", "server_error")


class TraceMock(MockProvider):
    """Answers each model with the replies recorded in a trace: a call whose messages match a
    recorded request gets that request's reply; otherwise the next unserved reply in order."""

    def __init__(self, recorded: Mapping[str, list[tuple[Any, str]]]) -> None:
        super().__init__(sorted(recorded))
        self.recorded = {model: list(calls) for model, calls in recorded.items()}
        self._served: dict[str, set[int]] = {model: set() for model in recorded}

    def respond(self, messages: Sequence[Message], model: str, kwargs: dict[str, Any]) -> str:
        calls = self.recorded.get(model)
        if calls is None:
            raise ProviderError(
                f"mock.from_trace: the trace has no call to model {model!r}", reason="not recorded"
            )
        served = self._served[model]
        wanted = [dict(m) for m in messages]
        order = [i for i, (request, _) in enumerate(calls) if i not in served and request == wanted]
        order += [i for i in range(len(calls)) if i not in served]
        if not order:
            raise ProviderError(
                f"mock.from_trace: all {len(calls)} recorded repl(ies) of {model!r} were served",
                reason="recorded replies exhausted",
            )
        index = order[0]
        served.add(index)
        return calls[index][1]


def _reply_text(messages: Any) -> str | None:
    for message in reversed(messages or []):
        if isinstance(message, Mapping) and isinstance(message.get("content"), str):
            return message["content"]
    return None


def from_trace(trace_or_path: Trace | str | os.PathLike[str]) -> TraceMock:
    """A provider for every model the trace called, replaying its recorded output_messages."""
    trace = (
        load_trace(Path(trace_or_path)) if isinstance(trace_or_path, str | os.PathLike) else trace_or_path
    )
    recorded: dict[str, list[tuple[Any, str]]] = {}
    for span in trace.spans:
        text = _reply_text(span.output_messages)
        model = (span.request or {}).get("model") or span.model
        if text is None or not model:
            continue
        recorded.setdefault(model, []).append(([dict(m) for m in span.input_messages or []], text))
    if not recorded:
        raise ProviderError(
            f"mock.from_trace: trace {trace.trace_id[:12]}… recorded no model replies",
            reason="nothing recorded",
            suggestions=["agents must call their model through proveai's providers to be recorded"],
        )
    return TraceMock(recorded)


class ScriptedMock(MockProvider):
    """Replies from a script: a list for every model, or {pattern: list} per model pattern."""

    def __init__(self, script: Mapping[str, Sequence[str]], repeat: bool) -> None:
        super().__init__(list(script))
        self.script = {pattern: list(replies) for pattern, replies in script.items()}
        self.repeat = repeat
        self._next = dict.fromkeys(self.script, 0)

    def respond(self, messages: Sequence[Message], model: str, kwargs: dict[str, Any]) -> str:
        pattern = next(p for p in self.script if fnmatch.fnmatchcase(model, p))
        replies, index = self.script[pattern], self._next[pattern]
        if index >= len(replies):
            if not self.repeat or not replies:
                raise ProviderError(
                    f"mock.responses: the {len(replies)} scripted repl(ies) for {pattern!r} are used up",
                    reason="scripted replies exhausted",
                )
            index %= len(replies)
        self._next[pattern] = index + 1
        return str(replies[index])


def responses(
    replies: Sequence[str] | Mapping[str, Sequence[str]], *, model: str = "*", repeat: bool = False
) -> ScriptedMock:
    """Scripted replies in order (`repeat=True` cycles instead of failing when used up)."""
    script = dict(replies) if isinstance(replies, Mapping) else {model: list(replies)}
    return ScriptedMock(script, repeat)


class FailureMock(MockProvider):
    """The first `times` calls fail like the real thing; later calls go to the provider the
    registry would have chosen without this mock."""

    def __init__(self, kind: str, times: int, model: str) -> None:
        super().__init__([model])
        self.kind = kind
        self.times = times
        self.failed = 0

    def respond(self, messages: Sequence[Message], model: str, kwargs: dict[str, Any]) -> str:
        return ""  # unused: call() is overridden

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse:
        self.calls.append({"messages": [dict(m) for m in messages], "model": model, "kwargs": dict(kwargs)})
        if self.failed < self.times:
            self.failed += 1
            raise _failure(self.kind, model)

        for registration in registrations():
            if registration.provider is not self and fnmatch.fnmatchcase(model, registration.pattern):
                return as_response(registration.provider.call(messages, model, **kwargs), model)
        raise ProviderError(
            f"No provider registered for model {model!r} behind mock.failure", reason="no provider"
        )


def _failure(kind: str, model: str) -> ProviderError:
    if kind == "timeout":
        return ProviderError(f"model {model!r}: request timed out (mock)", reason="timed out (mock)")
    if kind == "rate_limit":
        return ProviderError(
            f"model {model!r}: HTTP 429 rate limited (mock)", reason="HTTP 429 (mock)", status=429
        )
    if kind == "malformed":
        return ProviderError(f"model {model!r}: malformed reply (mock)", reason="malformed reply (mock)")
    return ProviderError(f"model {model!r}: HTTP 500 (mock)", reason="HTTP 500 (mock)", status=500)


def failure(kind: str = "timeout", *, times: int = 1, model: str = "*") -> FailureMock:
    """Fail the next `times` calls to models matching `model` with `kind`."""
    if kind not in FAILURE_KINDS:
        raise ValueError(f"mock.failure kind {kind!r}: choose one of {', '.join(FAILURE_KINDS)}")
    if times < 0:
        raise ValueError("mock.failure times must be >= 0")
    return FailureMock(kind, times, model)
