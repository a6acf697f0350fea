"""Re-invoking a captured @monitor function with new inputs, for agents replay cannot re-send.

An agent that calls its model outside proveai's providers (plain httpx, a vendor SDK, the
README's `llm.invoke`) records no chat request, so replay has nothing to re-send. When an
upstream change reached its inputs, replay imports the function the span recorded
(`module:qualname`) and calls it with the substituted inputs. It does so only when it is the
same code that was captured, and says why not otherwise:

- it must be the @monitor-decorated agent of the span's name;
- the module must be importable from the project (not `__main__`, not a function defined
  inside another one), and its file must be the span's recorded source file, under the
  project root: a trace that names some other module never gets it imported;
- the function's source must still hash to the span's recorded code hash;
- every argument must be rebuildable from its captured JSON (not truncated, not a `repr()`
  of an object; a parameter annotated with a dataclass or pydantic model is rebuilt from
  its dict);
- generators are not re-driven (their items belong to the pipeline that consumes them).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import importlib.util
import inspect
import re
import sys
import threading
import time
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from proveai.capture.monitor import _code_hash
from proveai.store import project_root
from proveai.traces.jsonsafe import TRUNCATION_MARKER, to_jsonable

_REPR_OBJECT = re.compile(r"^<[\w.]+ object at 0x[0-9a-fA-F]+>$")
_TRUNCATED = TRUNCATION_MARKER.split("{n}")[0]
_JSON_TYPES = (str, int, float, bool, dict, list, type(None))
_path_lock = threading.Lock()


class NotReinvokable(Exception):
    """Why a span's function cannot be re-invoked; str(exc) is the reason in words."""


@dataclass(frozen=True)
class Reinvocation:
    """The new output of one re-invoked span and how long the call took."""

    function: str
    output: Any
    latency_ms: float


class RecordedFunction(Protocol):
    """What re-invoking reads of a span: its agent's name and the function it recorded. A Span
    is one; so is a snapshot's pinned AgentDefinition."""

    @property
    def name(self) -> str: ...
    @property
    def function(self) -> str | None: ...  # "module:qualname"
    @property
    def source_file(self) -> str | None: ...
    @property
    def code_hash(self) -> str | None: ...


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _origin(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return Path(spec.origin).resolve()


def resolve_function(span: RecordedFunction, root: Path | None = None) -> Callable[..., Any]:
    """The undecorated function behind `span`, imported from the project; NotReinvokable if not."""
    function = getattr(span, "function", None)
    if not function or ":" not in function:
        raise NotReinvokable("the span recorded no function to re-invoke (captured by an older version?)")
    module_name, qualname = function.split(":", 1)
    if module_name == "__main__":
        raise NotReinvokable(
            f"{qualname} is defined in the script that was run (__main__), which cannot be imported "
            "without running it; move the agent into a module"
        )
    if "<locals>" in qualname:
        raise NotReinvokable(f"{function} is defined inside another function and cannot be imported")
    if not span.source_file:
        raise NotReinvokable(f"the span recorded no source file for {function}")
    root = (root or project_root(Path.cwd().resolve())).resolve()
    recorded = Path(span.source_file)
    recorded = (recorded if recorded.is_absolute() else root / recorded).resolve()
    if not _under(recorded, root):
        raise NotReinvokable(f"{function} lives outside the project ({span.source_file})")
    with _path_lock:
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
    top = _origin(module_name.split(".")[0])
    if top is None or not _under(top, root):
        raise NotReinvokable(f"module {module_name!r} is not importable from the project root {root}")
    if _origin(module_name) != recorded:
        raise NotReinvokable(f"module {module_name!r} is not the recorded source file {span.source_file}")
    try:
        target: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except Exception as exc:  # an import error is the user's code failing, reported per agent
        raise NotReinvokable(f"importing {function} failed: {type(exc).__name__}: {exc}") from exc
    # only a @monitor agent of the span's own name is ever called: a trace cannot point replay
    # at some other function of the project
    meta = getattr(target, "__proveai_agent__", None)
    if meta is None or getattr(meta, "name", None) != span.name:
        raise NotReinvokable(f"{function} is not the @monitor agent {span.name!r}")
    inner = inspect.unwrap(target)
    if not span.code_hash:
        raise NotReinvokable(f"the span recorded no code hash, so {function} cannot be checked unchanged")
    if _code_hash(inner) != span.code_hash:
        raise NotReinvokable(f"the code of {function} changed since the trace was captured")
    if inspect.isgeneratorfunction(inner) or inspect.isasyncgenfunction(inner):
        raise NotReinvokable(f"{function} is a generator: its items cannot be re-driven outside the pipeline")
    return inner


def _rebuild(name: str, value: Any, annotation: Any) -> Any:
    """The argument from its captured JSON, or NotReinvokable when the capture lost it."""
    texts = [value] if isinstance(value, str) else []
    if isinstance(value, dict | list):
        texts = [v for v in (value.values() if isinstance(value, dict) else value) if isinstance(v, str)]
    for text in texts:
        if _TRUNCATED in text:
            raise NotReinvokable(f"argument {name!r} was truncated when it was captured")
        if _REPR_OBJECT.match(text):
            raise NotReinvokable(f"argument {name!r} was captured as {text}, not as a value")
    if annotation is inspect.Parameter.empty or annotation is Any:
        return value
    origin = typing.get_origin(annotation) or annotation
    if isinstance(value, dict) and isinstance(origin, type):
        if dataclasses.is_dataclass(origin):
            return origin(**value)
        validate = getattr(origin, "model_validate", None)  # a pydantic model class
        if callable(validate):
            return validate(value)
    if origin in _JSON_TYPES or isinstance(value, origin if isinstance(origin, type) else object):
        return value
    if origin is tuple and isinstance(value, list):
        return tuple(value)
    if origin in (set, frozenset) and isinstance(value, list):
        return origin(value)
    if not isinstance(origin, type):  # Union, Literal, …: pass the JSON value through
        return value
    raise NotReinvokable(
        f"argument {name!r} is a {origin.__name__}; its captured JSON cannot be rebuilt into one"
    )


def rebuild_arguments(fn: Callable[..., Any], inputs: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """(args, kwargs) for `fn` from the span's captured (and substituted) inputs."""
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn)
    except Exception as exc:
        raise NotReinvokable(f"the signature of {fn.__qualname__} cannot be read: {exc}") from exc
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        if name not in inputs:
            if param.default is param.empty and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise NotReinvokable(f"argument {name!r} was not captured")
            continue
        annotation = hints.get(name, param.annotation)
        value = inputs[name]
        if param.kind is param.VAR_POSITIONAL:
            args.extend(_rebuild(name, item, annotation) for item in value)
        elif param.kind is param.VAR_KEYWORD:
            kwargs.update({key: _rebuild(name, item, annotation) for key, item in value.items()})
        elif param.kind is param.POSITIONAL_ONLY:
            args.append(_rebuild(name, value, annotation))
        else:
            kwargs[name] = _rebuild(name, value, annotation)
    unknown = set(inputs) - set(signature.parameters)
    if unknown:
        names = ", ".join(sorted(unknown))
        raise NotReinvokable(f"captured argument(s) {names} are not parameters of {fn.__qualname__}")
    return args, kwargs


def reinvoke(span: RecordedFunction, inputs: Mapping[str, Any], root: Path | None = None) -> Reinvocation:
    """Call the span's function with `inputs`; NotReinvokable (with the reason) when it cannot."""
    fn = resolve_function(span, root)
    args, kwargs = rebuild_arguments(fn, inputs)
    started = time.perf_counter()
    try:
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
    except Exception as exc:  # the agent's own failure, reported per agent, never a crash of the run
        raise NotReinvokable(f"re-invoking {span.function} raised {type(exc).__name__}: {exc}") from exc
    return Reinvocation(str(span.function), to_jsonable(result), (time.perf_counter() - started) * 1000)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
