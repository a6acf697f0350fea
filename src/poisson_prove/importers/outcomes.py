"""Score values to outcomes, and which outcomes an import declares.

A scorer's values are of one kind: letters (Inspect's C / I / P / N), numbers, or booleans.
Every kind has a success and a failure (C / I, 1 / 0, true / false), so those outcomes are
always declared; an outcome only some values give (`partial`: P, or a number strictly between
0 and 1; a value `--map` gives its own outcome) is declared only when a value of the import
gave it, or when `--map` names it. A C/I scorer so declares `correct` and `incorrect` only:
no `partial` test that can never see an event, and that would double every q of
Benjamini-Hochberg.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from poisson_prove.errors import ProveError, ProveExit

SUCCESS = "correct"
FAILURE = "incorrect"
PARTIAL = "partial"

DEFAULT_TABLE: Mapping[str, str] = {
    "C": SUCCESS,
    "I": FAILURE,
    "P": PARTIAL,
    "N": FAILURE,
    "1": SUCCESS,
    "0": FAILURE,
    "true": SUCCESS,
    "false": FAILURE,
}
#: The success and the failure of each kind of value: declared whenever that kind was seen.
BINARY_KEYS: Mapping[str, tuple[str, str]] = {
    "letter": ("C", "I"),
    "number": ("1", "0"),
    "boolean": ("true", "false"),
}


@dataclass(frozen=True)
class OutcomeMapping:
    """Score value -> outcome. Letters and exact numbers by table; any other number in (0, 1)
    is `between`; booleans are true/false. `correct` is the one success."""

    table: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_TABLE))
    between: str = PARTIAL
    explicit: frozenset[str] = frozenset()  # the value keys --map set: their outcomes are declared

    def with_overrides(self, pairs: Sequence[str]) -> OutcomeMapping:
        """`VALUE=OUTCOME` pairs (the CLI's --map) laid over this mapping."""
        table = dict(self.table)
        explicit = set(self.explicit)
        for pair in pairs:
            value, sep, outcome = pair.partition("=")
            if not sep or not value.strip() or not outcome.strip():
                raise ProveError(
                    f'--map "{pair}" is not VALUE=OUTCOME',
                    suggestions=["--map P=incorrect"],
                    exit_code=ProveExit.USAGE,
                )
            key = value_key(value.strip())
            table[key] = outcome.strip()
            explicit.add(key)
        return OutcomeMapping(table, self.between, frozenset(explicit))

    def outcome(self, value: Any) -> str | None:
        """The outcome of one score value, or None when it is not a value the mapping reads."""
        key = value_key(value)
        if key in self.table:
            return self.table[key]
        if _is_number(value) and 0 < float(value) < 1:
            return self.between
        return None

    def declared(self, values: Iterable[Any]) -> list[str]:
        """The outcomes of a scorer whose values (of this import) were `values`: the success and
        failure of each kind of value seen, what `--map` names, and what a value gave; `correct`
        first, then in the order of the mapping."""
        values = list(values)
        kinds = {value_kind(v) for v in values} or {"letter"}
        named = [self.table[k] for kind in sorted(kinds) for k in BINARY_KEYS[kind] if k in self.table]
        named += [self.table[k] for k in sorted(self.explicit)]
        named += [o for o in (self.outcome(v) for v in values) if o is not None]
        order = [SUCCESS, *self.table.values(), self.between]
        chosen = set(named) | {SUCCESS}
        return [o for o in dict.fromkeys(order) if o in chosen] + sorted(chosen - set(order))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def value_kind(value: Any) -> str:
    """`boolean`, `number` (numbers and numeric text) or `letter` (any other text)."""
    if isinstance(value, bool) or str(value).lower() in {"true", "false"}:
        return "boolean"
    key = value_key(value)
    try:
        float(key)
    except ValueError:
        return "letter"
    return "number" if key.lower() not in {"nan", "inf", "-inf"} else "letter"


def value_key(value: Any) -> str:
    """The text a value is looked up by: `1` for 1, 1.0 and "1.0"; `true` for True and "True"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_number(value):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    text = str(value)
    try:
        return value_key(float(text)) if text.lower() not in {"nan", "inf", "-inf"} else text
    except ValueError:
        return text.lower() if text.lower() in {"true", "false"} else text
