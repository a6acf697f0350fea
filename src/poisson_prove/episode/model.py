"""Episode: how one rollout ended, and its validation against a spec's declarations."""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Episode:
    """How one case ended.

    `outcome` names the ending, `t` is when it ended and `horizon` the most `t` could have
    been (both in the spec's `t_unit`), `meta` is anything else, with `case_id` in it.
    """

    outcome: str
    t: float
    horizon: float
    meta: Mapping[str, Any] = field(default_factory=dict)


class InvalidEpisode(ValueError):
    """A rollout's return value that cannot be stored as an outcome."""


def validate_episode(value: object, outcomes: Collection[str]) -> Episode:
    """Return `value` if it is a storable Episode for these declared outcomes, else raise."""
    if not isinstance(value, Episode):
        raise InvalidEpisode(
            f"rollout returned {type(value).__name__}, not poisson_prove.Episode"
        )
    if value.outcome not in outcomes:
        raise InvalidEpisode(
            f"outcome {value.outcome!r} is not declared (declared: {', '.join(sorted(outcomes))})"
        )
    t, horizon = value.t, value.horizon
    if not _is_number(t) or not math.isfinite(t):
        raise InvalidEpisode(f"t must be a finite number, got {t!r}")
    if not _is_number(horizon) or not (math.isfinite(horizon) and horizon > 0):
        raise InvalidEpisode(f"horizon must be a positive finite number, got {horizon!r}")
    if not 0 <= t <= horizon:
        raise InvalidEpisode(f"t {t!r} is outside [0, horizon {horizon!r}]")
    if value.meta is not None and not isinstance(value.meta, Mapping):
        raise InvalidEpisode(f"meta must be a dict, got {type(value.meta).__name__}")
    return value


def _is_number(value: object) -> bool:
    """A real number, NumPy's included (step counters are often numpy ints); never a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"
