"""@monitor: record a decorated agent call as a span of the open trace.

Outside a trace the wrapper does one ContextVar lookup and the plain call. Inside, it binds
the arguments by parameter name, times the call, records output or error (then re-raises), and
makes its span the parent of monitored calls made inside it. Parents follow contextvars, so
asyncio tasks and threads started with a copied context keep their own parents; a plain
threading.Thread starts with an empty context and its calls are not captured. A trace whose
owner has a recorder (`_recorder`: a sweep episode's, capture.episode, or OpenTelemetry's join,
capture.otel) hands its calls to it; without one the wrapper's own path runs, unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import proveai.capture.episode  # noqa: F401  # registers @monitor with the sweep episode recorder
from proveai.capture.otel import OtelJoin
from proveai.capture.reads import dependencies
from proveai.store import project_root
from proveai.traces.context import FRAME, current_span
from proveai.traces.jsonsafe import to_jsonable
from proveai.traces.otlp import span_attributes
from proveai.traces.trace import KINDS, OPERATIONS, Span

F = TypeVar("F", bound=Callable[..., Any])

_ids = random.Random(os.urandom(16))
os.register_at_fork(after_in_child=lambda: _ids.seed(os.urandom(16)))  # forked children: own ids
_getrandbits = _ids.getrandbits
_time_ns = time.time_ns


class AgentMeta:
    """What @monitor was told about an agent, fixed at decoration time."""

    __slots__ = (
        "code_hash",
        "description",
        "function",
        "kind",
        "model",
        "name",
        "operation",
        "param_names",
        "parent_agent",
        "signature",
        "simple_binding",
        "source_file",
        "version",
    )

    def __init__(self, fn: Callable[..., Any], name: str, operation: str, kind: str, model: str | None,
                 version: str | None, parent_agent: str | None, description: str | None) -> None:
        self.name = name
        self.operation = operation
        self.kind = kind
        self.model = model
        self.version = version
        self.parent_agent = parent_agent
        self.description = description
        self.source_file = _source_file(fn)
        self.code_hash = _code_hash(fn)
        self.function = _function_id(fn)
        try:
            self.signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        params = list(self.signature.parameters.values()) if self.signature else []
        self.param_names = tuple(p.name for p in params)
        # positional-or-keyword parameters without defaults bind by zip: the common fast path
        self.simple_binding = self.signature is not None and all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params
        )

    def _bounded(self, name: str, value: Any) -> Any:
        kind = self.signature.parameters[name].kind if self.signature else None
        if kind is inspect.Parameter.VAR_POSITIONAL:
            return [to_jsonable(item) for item in value]
        if kind is inspect.Parameter.VAR_KEYWORD:
            return {key: to_jsonable(item) for key, item in value.items()}
        return to_jsonable(value)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if self.simple_binding and not kwargs and len(args) == len(self.param_names):
            if len(args) == 1:  # the commonest agent shape, kept short: this runs on every call
                return {self.param_names[0]: to_jsonable(args[0])}
            return {name: to_jsonable(value) for name, value in zip(self.param_names, args, strict=True)}
        if self.signature is not None:
            try:
                bound = self.signature.bind(*args, **kwargs)
                bound.apply_defaults()
                # *args and **kwargs are bounded item by item: each passed value is one value
                return {
                    name: self._bounded(name, value) for name, value in bound.arguments.items()
                }
            except TypeError:
                pass  # the call itself will raise the same TypeError; still record what was passed
        inputs = {f"arg{i}": to_jsonable(value) for i, value in enumerate(args)}
        inputs.update({k: to_jsonable(v) for k, v in kwargs.items()})
        return inputs


class SpanBuilder:
    """An open span: filled while the call runs, frozen into a Span when the trace closes.

    Opening a span must stay cheap: the hot fields are slots, the id stays an int until the
    trace closes, and fields a call rarely sets are class-level defaults (instance dict on use).
    """

    __slots__ = ("__dict__", "_id", "_owner", "_parent", "end_ns", "inputs", "meta", "output", "start_ns")

    status = "ok"
    error: str | None = None
    input_messages: list[dict[str, Any]] | None = None
    output_messages: list[dict[str, Any]] | None = None
    usage: dict[str, int] | None = None
    request: dict[str, Any] | None = None
    opened: list[str] | None = None  # paths opened for reading during the call (capture.reads)
    otel_parent: str | None = None  # an OpenTelemetry span between it and its trace (capture.otel)

    def __init__(self, frame: Any, meta: AgentMeta, inputs: dict[str, Any]) -> None:
        owner = frame._owner
        self._owner = owner
        self._parent = frame  # the enclosing span builder, or the Trace itself at top level
        self._id = _getrandbits(64) or 1  # an all-zero span id is invalid in OTLP
        self.meta = meta
        self.inputs = inputs
        owner._builders.append(self)
        self.start_ns = _time_ns()

    @property
    def _span_id(self) -> str:
        return f"{self._id:016x}"

    @property
    def span_id(self) -> str:
        return f"{self._id:016x}"

    @property
    def parent_span_id(self) -> str | None:
        return self.otel_parent or self._parent._span_id

    @property
    def trace_id(self) -> str:
        """The trace id the span carries: its trace's, or the OpenTelemetry trace's it joined."""
        return self._owner.span_trace_id

    @property
    def name(self) -> str:
        return self.meta.name

    def record_llm_call(
        self,
        request_messages: list[dict[str, Any]],
        response: str | list[dict[str, Any]] | None,
        model: str | None = None,
        usage: dict[str, int] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Record the chat request/response a provider sent on behalf of this agent.

        `response` is the reply text or a list of messages. Several calls in one span keep
        the first request (the agent's prompt) and the last response; token usage adds up.
        """
        if self.input_messages is None:
            self.input_messages = [to_jsonable(dict(m)) for m in request_messages]
        if isinstance(response, str):
            self.output_messages = [{"role": "assistant", "content": to_jsonable(response)}]
        elif response is not None:
            self.output_messages = [to_jsonable(dict(m)) for m in response]
        if usage:
            merged = dict(self.usage or {})
            for key in ("input_tokens", "output_tokens"):
                if key in usage and usage[key] is not None:
                    merged[key] = merged.get(key, 0) + int(usage[key])
            self.usage = merged
        request: dict[str, Any] = {"model": model or self.meta.model}
        request.update(to_jsonable(dict(kwargs or {})))
        self.request = request

    def _finish_ok(self, output: Any) -> None:
        self.end_ns = time.time_ns()
        self.output = to_jsonable(output)

    def _finish_error(self, exc: BaseException) -> None:
        self.end_ns = time.time_ns()
        self.status = "error"
        self.error = f"{type(exc).__name__}: {exc}"

    def freeze(self, trace_end_ns: int) -> Span:
        meta = self.meta
        status, error, end_ns = self.status, self.error, getattr(self, "end_ns", 0)
        output = getattr(self, "output", None)
        if not end_ns:  # still running when the trace closed (e.g. a thread not joined)
            status, error, end_ns = "error", "unfinished when the trace closed", trace_end_ns
        reads, imports = self._dependencies()
        span = Span(
            trace_id=self._owner.span_trace_id, span_id=self.span_id, parent_span_id=self.parent_span_id,
            name=meta.name, operation=meta.operation, kind=meta.kind, model=meta.model,
            version=meta.version, parent_agent=meta.parent_agent, description=meta.description,
            source_file=meta.source_file, start_ns=self.start_ns, end_ns=end_ns, status=status,
            error=error, inputs=self.inputs, output=output, input_messages=self.input_messages,
            output_messages=self.output_messages, usage=self.usage, request=self.request,
            code_hash=meta.code_hash, function=meta.function, reads=reads, imports=imports,
        )
        # the same attributes a reader gets back from the OTLP file, so live == loaded
        span.attributes.update(span_attributes(span))
        return span

    def _dependencies(self) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
        """The span's `reads` and `imports` (capture.reads); None each when not tracked."""
        root = (self._owner.invocation or {}).get("project_root") or str(project_root(Path.cwd()))
        found = dependencies(self.opened, self.meta.function, self.meta.source_file, str(root))
        return found if found is not None else (None, None)


def _open(frame: Any, meta: AgentMeta, args: tuple[Any, ...], kwargs: dict[str, Any]) -> SpanBuilder:
    return SpanBuilder(frame, meta, meta.bind(args, kwargs))


def monitor(
    name: str,
    operation: str = "invoke_agent",
    description: str | None = None,
    model: str | None = None,
    parent_agent: str | None = None,
    version: str | None = None,
    kind: str = "UNKNOWN",
) -> Callable[[F], F]:
    """Record calls of the decorated function as spans of agent `name` inside a trace."""
    if not isinstance(name, str) or not name:
        raise ValueError("monitor() needs an agent name, e.g. @monitor('classify')")
    if kind not in KINDS:
        raise ValueError(f"invalid kind {kind!r} for agent {name!r}; valid kinds: {', '.join(KINDS)}")
    if operation not in OPERATIONS:
        raise ValueError(
            f"invalid operation {operation!r} for agent {name!r}; valid operations: {', '.join(OPERATIONS)}"
        )

    def decorate(fn: F) -> F:
        meta = AgentMeta(fn, name, operation, kind, model, version, parent_agent, description)
        if inspect.isasyncgenfunction(fn):
            wrapper: Any = _wrap_iterator(fn, meta, _drive_async_gen)
        elif inspect.iscoroutinefunction(fn):
            wrapper = _wrap_async(fn, meta)
        elif inspect.isgeneratorfunction(fn):
            wrapper = _wrap_iterator(fn, meta, _drive_gen)
        else:
            wrapper = _wrap_sync(fn, meta)
        wrapper.__proveai_agent__ = meta
        # the wrapper takes and returns what fn does, and wraps copies its name and signature
        return cast(F, functools.wraps(fn)(wrapper))

    return decorate


def _wrap_sync(fn: Callable[..., Any], meta: AgentMeta) -> Callable[..., Any]:
    # the hot path: names bound to locals, no function calls beyond the span's own
    get_frame, set_frame, reset_frame = FRAME.get, FRAME.set, FRAME.reset
    bind, builder_of, safe, now = meta.bind, SpanBuilder, to_jsonable, time.time_ns

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        frame = get_frame()
        if frame is None:
            return fn(*args, **kwargs)
        recorder = frame._owner._recorder
        if recorder is not None:  # a sweep episode (capture.episode) or OpenTelemetry (capture.otel)
            return recorder.call(fn, meta, frame, args, kwargs, builder_of)
        builder = builder_of(frame, meta, bind(args, kwargs))
        token = set_frame(builder)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            builder._finish_error(exc)
            raise
        finally:
            reset_frame(token)
        builder.end_ns = now()
        builder.output = safe(result)
        return result

    return wrapper


def _wrap_async(fn: Callable[..., Any], meta: AgentMeta) -> Callable[..., Any]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        frame = FRAME.get()
        if frame is None:
            return await fn(*args, **kwargs)
        recorder = frame._owner._recorder
        if recorder is not None:  # a sweep episode (capture.episode) or OpenTelemetry (capture.otel)
            return await recorder.acall(fn, meta, frame, args, kwargs, SpanBuilder)
        builder = _open(frame, meta, args, kwargs)
        token = FRAME.set(builder)
        try:
            result = await fn(*args, **kwargs)
        except BaseException as exc:
            builder._finish_error(exc)
            raise
        finally:
            FRAME.reset(token)
        builder._finish_ok(result)
        return result

    return wrapper


def _wrap_iterator(
    fn: Callable[..., Any], meta: AgentMeta, drive: Callable[[Any, SpanBuilder, OtelJoin | None], Any]
) -> Callable[..., Any]:
    """A (sync or async) generator's span opens at the call and closes when iteration ends;
    `drive` re-yields the items with the span as the body's parent (and, in a trace joined to
    OpenTelemetry, as its current span); output = the items."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        frame = FRAME.get()
        if frame is None:
            return fn(*args, **kwargs)
        builder = _open(frame, meta, args, kwargs)
        recorder = frame._owner._recorder
        join = recorder if isinstance(recorder, OtelJoin) else None
        if join is not None:
            join.adopt_parent(builder)
        return drive(fn(*args, **kwargs), builder, join)

    return wrapper


def _drive_gen(gen: Any, builder: SpanBuilder, join: OtelJoin | None) -> Any:
    items: list[Any] = []
    to_send: Any = None
    to_throw: BaseException | None = None
    while True:
        token = FRAME.set(builder)  # the body runs with this span as parent, the consumer not
        current = None if join is None else join.enter(builder)
        try:
            item = gen.throw(to_throw) if to_throw is not None else gen.send(to_send)
        except StopIteration as stop:
            builder._finish_ok(items)
            return stop.value
        except BaseException as exc:
            builder._finish_error(exc)
            raise
        finally:
            if join is not None:
                join.leave(current)
            FRAME.reset(token)
        items.append(item)
        to_throw = None
        try:
            to_send = yield item
        except GeneratorExit:
            gen.close()
            builder._finish_ok(items)
            raise
        except BaseException as exc:
            to_throw = exc


async def _drive_async_gen(agen: Any, builder: SpanBuilder, join: OtelJoin | None) -> Any:
    items: list[Any] = []
    to_send: Any = None
    to_throw: BaseException | None = None
    while True:
        token = FRAME.set(builder)
        current = None if join is None else join.enter(builder)
        try:
            if to_throw is not None:
                item = await agen.athrow(to_throw)
            else:
                item = await agen.asend(to_send)
        except StopAsyncIteration:
            builder._finish_ok(items)
            return
        except BaseException as exc:
            builder._finish_error(exc)
            raise
        finally:
            if join is not None:
                join.leave(current)
            FRAME.reset(token)
        items.append(item)
        to_throw = None
        try:
            to_send = yield item
        except GeneratorExit:
            await agen.aclose()
            builder._finish_ok(items)
            raise
        except BaseException as exc:
            to_throw = exc


def _code_hash(fn: Callable[..., Any]) -> str | None:
    """sha256 of the function's source text: a code edit changes the agent's identity."""
    try:
        source = inspect.getsource(inspect.unwrap(fn))
    except (TypeError, OSError):
        return None
    return "sha256:" + hashlib.sha256(source.encode("utf-8")).hexdigest()


def _function_id(fn: Callable[..., Any]) -> str | None:
    """`module:qualname` of the decorated function, so replay can import and re-invoke it."""
    inner = inspect.unwrap(fn)
    module, qualname = getattr(inner, "__module__", None), getattr(inner, "__qualname__", None)
    return f"{module}:{qualname}" if module and qualname else None


def _source_file(fn: Callable[..., Any]) -> str | None:
    try:
        path = inspect.getsourcefile(inspect.unwrap(fn))
    except (TypeError, OSError):
        return None
    if not path:
        return None
    resolved = Path(path).resolve()
    root = project_root(Path.cwd())
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return str(resolved)


__all__ = ["AgentMeta", "SpanBuilder", "current_span", "monitor"]
