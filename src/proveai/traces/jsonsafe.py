"""Turn captured arguments and outputs into bounded, JSON-safe values.

Conventions: str/int/bool/None as is, finite floats as is (NaN and infinities as their
repr string), dict/list/tuple/set recursively (non-string keys via str()), dataclasses and
pydantic models via their dict form, bytes and anything else via repr(). Each captured value
is bounded to VALUE_BOUND characters of JSON; a longer one is cut and marked.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

VALUE_BOUND = 65536  # characters of JSON per captured value
TRUNCATION_MARKER = "…[proveai: truncated {n} chars]"
_MAX_DEPTH = 32


def _plain(value: Any, depth: int) -> Any:
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str or kind is int:
        return value
    if kind is float:
        return value if math.isfinite(value) else repr(value)
    if depth >= _MAX_DEPTH:
        return repr(value)
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(k)): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return _plain(dump(mode="json"), depth + 1)
        except Exception:
            return repr(value)
    try:
        return repr(value)
    except Exception:
        return f"<unrepresentable {kind.__name__}>"


def _cut(text: str, bound: int) -> str:
    return text[:bound] + TRUNCATION_MARKER.format(n=len(text) - bound)


def to_jsonable(value: Any, bound: int = VALUE_BOUND) -> Any:
    """A bounded JSON-safe copy of `value` (see the module docstring for the rules)."""
    kind = type(value)
    if kind is str:  # the hot path: a plain string argument
        return value if len(value) <= bound else _cut(value, bound)
    plain = _plain(value, 0)
    if isinstance(plain, str):
        return plain if len(plain) <= bound else _cut(plain, bound)
    if isinstance(plain, dict | list):
        text = json.dumps(plain, ensure_ascii=False)
        if len(text) > bound:
            return _cut(text, bound)  # too big to keep structured: keep its JSON text, cut
    return plain
