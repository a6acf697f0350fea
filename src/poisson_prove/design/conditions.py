"""Conditions: the canonical key stored with every episode (its `cell` column), the label users
read, and (for a benchmark) the key of the pooled group a condition belongs to."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def condition_key(cfg: Mapping[str, Any]) -> str:
    """The canonical, order-independent key of a condition: its cfg as compact sorted JSON.

    Stable across versions (seeds are derived from it): `{"task_id":"refund","x":0.55}`.
    """
    return json.dumps(dict(cfg), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cfg_of(key: str) -> dict[str, Any]:
    """The cfg a condition key stands for."""
    return json.loads(key)


def format_value(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


def condition_label(cfg: Mapping[str, Any], axis_order: Sequence[str] | None = None) -> str:
    """How a condition reads: `task_id refund · tool_fail_rate 0.55` (axes in spec order)."""
    names = list(axis_order) if axis_order else sorted(cfg)
    names += [n for n in sorted(cfg) if n not in names]
    return " · ".join(f"{name} {format_value(cfg[name])}" for name in names if name in cfg)


#: The key of the one pooled group of a spec whose only axis is its case axis.
ALL_CASES = "all"


def pooled_key(cfg: Mapping[str, Any], case_axis: str) -> str:
    """The pooled group a condition of a benchmark belongs to: its key without the case axis
    (the conditions that differ only on their case pool into one row), `all` when the case
    axis is the only axis."""
    rest = {name: value for name, value in cfg.items() if name != case_axis}
    return condition_key(rest) if rest else ALL_CASES
