"""The sweep spec: a TOML file read into a frozen, validated `SweepSpec`.

Every error names the file, the key and (when the text shows it) the line, so the user can go
straight to the mistake. Nothing here imports the target; `isolation` and `execute` do that.

One categorical axis may be the spec's cases (`cases = true`, its ids inline or `values_from`
a file beside the spec: design.cases). `SweepSpec.raw`, what the manifest stores, holds the ids
read from that file as the axis's `values` (beside `values_from`), so a stored run never needs
the file again; `case_axis_of` finds the case axis of such a stored spec.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poisson_prove.backends.tables import validate_backend_table
from poisson_prove.chaos.config import parse_chaos
from poisson_prove.design.cases import parse_case_axis
from poisson_prove.design.conditions import condition_key, condition_label
from poisson_prove.design.spec_capture import Capture, parse_capture
from poisson_prove.design.spec_where import Where, check_keys, is_target_ref
from poisson_prove.errors import ProveError
from prove_common.files import NotRegularFile, read_regular_text
from prove_common.suggest import did_you_mean

TOP_KEYS = (
    "target",
    "target_id",
    "t_unit",
    "replicates",
    "budget",  # dollars: `sweep --budget` from the spec (see poisson_prove.sweep.budget)
    "axes",
    "declare",
    "capture",
    "chaos",
    "local",
    "dask",
    "ray",
    "modal",
    "burla",
)
BACKEND_TABLES = ("local", "dask", "ray", "modal", "burla")
AXIS_TYPES = ("categorical", "continuous", "integer")
AXIS_KEYS = ("type", "values", "values_from", "column", "cases")
DECLARE_KEYS = ("outcomes", "failures", "successes")
# target_id: letters of any script, digits, . _ - and space, starting with a letter or digit; 100 at most
_TARGET_ID_RE = re.compile(r"^[^\W_][\w. -]{0,99}$")


@dataclass(frozen=True)
class Axis:
    """One sweep axis: its name, type and values (continuous values are floats); `cases` when
    it is the spec's case axis, `values_from` the file its ids were read from (as written)."""

    name: str
    type: str
    values: tuple[Any, ...]
    cases: bool = False
    values_from: str | None = None


@dataclass(frozen=True)
class Condition:
    """One condition: its canonical key, the label users read and its cfg."""

    key: str
    label: str
    cfg: Mapping[str, Any]


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep spec. `raw` is the TOML as read (stored in the run's manifest)."""

    path: Path
    raw: Mapping[str, Any]
    target: str
    target_id: str
    t_unit: str
    replicates: int
    axes: tuple[Axis, ...]
    outcomes: tuple[str, ...]
    failures: tuple[str, ...]
    successes: tuple[str, ...]
    budget: float | None = None  # dollars: `sweep --budget` from the spec (the flag wins)
    case_axis: str | None = None  # the axis with `cases = true`, if any
    capture: Capture = field(default_factory=Capture)
    chaos: Mapping[str, Any] = field(default_factory=dict)
    backends: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def spec_dir(self) -> Path:
        """The folder put first on the import path before the target is imported."""
        return self.path.resolve().parent

    @property
    def axis_order(self) -> list[str]:
        return [axis.name for axis in self.axes]

    def conditions(self) -> list[Condition]:
        """The conditions: the cartesian product of the axes, in spec order."""
        names = self.axis_order
        out = []
        for combo in itertools.product(*(axis.values for axis in self.axes)):
            cfg = dict(zip(names, combo, strict=True))
            out.append(Condition(condition_key(cfg), condition_label(cfg, names), cfg))
        return out


def _qualified(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


def _names(where: Where, table: str, key: str, value: Any, *, allow_empty: bool) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise where.error(table, key, f"{_qualified(table, key)} must be a list of names, got {value!r}")
    if not value and not allow_empty:
        raise where.error(table, key, f"{_qualified(table, key)} must name at least one outcome")
    dupes = sorted({v for v in value if value.count(v) > 1})
    if dupes:
        raise where.error(table, key, f"{_qualified(table, key)} repeats {', '.join(dupes)}")
    return tuple(value)


def _axis(where: Where, name: str, table: Any, *, stored: bool) -> Axis:
    """One [axes.NAME] table; with `stored` (a manifest's spec) a case axis's `values` are the
    ids once read from its `values_from`, which is not read again."""
    qual = f"axes.{name}"
    if not isinstance(table, Mapping):
        raise where.error("axes", name, f"[{qual}] must be a table with type and values")
    check_keys(where, qual, table, AXIS_KEYS)
    kind = table.get("type")
    if kind is None:
        raise where.error(qual, None, f"[{qual}] has no type (one of {', '.join(AXIS_TYPES)})")
    if kind not in AXIS_TYPES:
        raise where.error(
            qual,
            "type",
            f"{qual}.type must be one of {', '.join(AXIS_TYPES)}, got {kind!r}"
            f"{did_you_mean(str(kind), AXIS_TYPES)}",
        )
    case = parse_case_axis(where.error, qual, table, kind, where.path.parent, stored=stored)
    if case is not None:
        return Axis(name, kind, case[0], cases=True, values_from=case[1])
    values = table.get("values")
    if values is None:
        raise where.error(qual, None, f"[{qual}] has no values")
    if not isinstance(values, list):
        raise where.error(qual, "values", f"{qual}.values must be a list, got {values!r}")
    if not values:
        raise where.error(qual, "values", f"{qual}.values is empty: an axis needs at least one value")
    out: list[Any] = []
    for value in values:
        if kind == "continuous":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise where.error(
                    qual, "values", f"{qual}.values must be numbers (continuous), got {value!r}"
                )
            value = float(value)
        elif kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise where.error(qual, "values", f"{qual}.values must be integers, got {value!r}")
        elif isinstance(value, (list, dict)) or (isinstance(value, float) and not math.isfinite(value)):
            raise where.error(qual, "values", f"{qual}.values must be strings or numbers, got {value!r}")
        out.append(value)
    if kind == "categorical" and not stored:  # a stored run keeps the values it was made with
        _categorical_values(where, qual, out)
    seen: set[str] = set()
    for value in out:
        token = condition_key({"v": value})
        if token in seen:
            raise where.error(qual, "values", f"{qual}.values repeats {value!r}")
        seen.add(token)
    return Axis(name, kind, tuple(out))


def _categorical_values(where: Where, qual: str, values: list[Any]) -> None:
    """A categorical axis holds names, or numbers (ids), never both, no booleans, no blank name:
    each value is shown as a condition's label and typed back in `x=value`, where `1` and `"1"`,
    `true` and `"true"`, or an empty value could not be told apart."""
    for value in values:
        if isinstance(value, bool):
            raise where.error(
                qual,
                "values",
                f"{qual}.values holds the boolean {str(value).lower()}: "
                "a categorical value is a name or a number",
                next_=[
                    'write the values as names, values = ["on", "off"], '
                    f'or make [{qual}] type = "integer" with 0 and 1'
                ],
            )
        if isinstance(value, str) and (not value.strip() or not value.isprintable()):
            raise where.error(
                qual,
                "values",
                f"{qual}.values holds {value!r}: "
                "a categorical value is a visible name, with no control character",
                next_=[f"write each of {qual}.values as a name of letters, digits or punctuation"],
            )
    names = [value for value in values if isinstance(value, str)]
    if names and len(names) < len(values):
        number = next(value for value in values if not isinstance(value, str))
        raise where.error(
            qual,
            "values",
            f"{qual}.values mixes names and numbers ({names[0]!r} and {number!r}): "
            "a categorical axis holds one kind",
            next_=[f'quote the numbers as names ("{number}") or use names only'],
        )


def case_axis_of(spec: Any) -> str | None:
    """The case axis of a spec as stored (a manifest's `spec`, or an import's): the axis whose
    table in `spec["axes"]` has `cases = true`, or None. More than one is a ProveError."""
    axes = spec.get("axes") if isinstance(spec, Mapping) else None
    if not isinstance(axes, Mapping):
        return None
    named = [
        name for name, table in axes.items() if isinstance(table, Mapping) and table.get("cases") is True
    ]
    if len(named) > 1:
        raise ProveError(
            f"the spec declares {len(named)} case axes ({', '.join(named)}); "
            "at most one axis has cases = true"
        )
    return named[0] if named else None


def _axes(
    where: Where, raw: Mapping[str, Any], *, stored: bool
) -> tuple[tuple[Axis, ...], Mapping[str, Any]]:
    """The spec's axes, and `raw` with the case ids read from a file written into it."""
    axes_table = raw.get("axes", {})
    if not isinstance(axes_table, Mapping):
        raise where.error("", "axes", "axes must be tables: [axes.NAME] with type and values")
    for name in axes_table:
        if not stored and (not name.strip() or not name.isprintable()):
            # the header as written: line_of drops a header's spaces, and the text keeps escapes
            written = json.dumps(name)[1:-1].replace(" ", "")
            raise where.error(
                "axes",
                written,
                f"an axis is named {name!r}: an axis name is a visible name, with no control character",
                next_=["name the axis, [axes.ticket] for example (cfg holds its value under that name)"],
            )
    axes = tuple(_axis(where, name, table, stored=stored) for name, table in axes_table.items())
    case_axes = [axis.name for axis in axes if axis.cases]
    if len(case_axes) > 1:
        first, second = case_axes[:2]
        raise where.error(
            f"axes.{second}",
            "cases",
            f"axes.{second}.cases: one axis at most is the spec's cases, and axes.{first} already is",
            next_=[f"remove cases = true from one of [axes.{first}] and [axes.{second}]"],
        )
    read = [axis for axis in axes if axis.values_from is not None and not stored]
    if not read:
        return axes, raw
    tables = {name: dict(table) for name, table in axes_table.items()}
    for axis in read:
        tables[axis.name]["values"] = list(axis.values)
    return axes, {**raw, "axes": tables}


def _declare(where: Where, data: Any) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    if not isinstance(data, Mapping):
        raise where.error("", "declare", "[declare] must be a table with outcomes, failures, successes")
    check_keys(where, "declare", data, DECLARE_KEYS)
    if "outcomes" not in data:
        raise where.error("declare", None, "[declare] has no outcomes")
    outcomes = _names(where, "declare", "outcomes", data["outcomes"], allow_empty=False)
    if "failures" not in data:
        raise where.error("declare", None, "[declare] has no failures: name the outcomes that count against")
    failures = _names(where, "declare", "failures", data["failures"], allow_empty=False)
    successes = _names(where, "declare", "successes", data.get("successes", []), allow_empty=True)
    for key, names in (("failures", failures), ("successes", successes)):
        stray = [n for n in names if n not in outcomes]
        if stray:
            raise where.error(
                "declare",
                key,
                f"declare.{key} names {', '.join(stray)}, not among declare.outcomes ({', '.join(outcomes)})",
                next_=[f"add {', '.join(stray)} to declare.outcomes, or remove it from declare.{key}"],
            )
    both = [n for n in failures if n in successes]
    if both:
        raise where.error(
            "declare",
            "successes",
            f"{', '.join(both)} is declared both a failure and a success",
            next_=["an outcome counts against the agent or for it, not both"],
        )
    return outcomes, failures, successes


def parse_spec(text: str, path: Path) -> SweepSpec:
    """Validate the spec's text; `path` is where it came from (for errors, the import path and
    a case axis's `values_from`, read from the same folder)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ProveError(f"{path}: not valid TOML: {err}") from None
    return _validate(raw, path, Where(path, text), stored=False)


def _validate(raw: Mapping[str, Any], path: Path, where: Where, *, stored: bool) -> SweepSpec:
    check_keys(where, "", raw, TOP_KEYS)

    target = raw.get("target")
    if target is None:
        raise ProveError(f'{path}: no target (add target = "my_module:rollout")')
    if not isinstance(target, str) or not is_target_ref(target):
        raise where.error("", "target", f"target must read module:function, got {target!r}")
    target_id = raw.get("target_id")
    if target_id is None:
        raise ProveError(
            f"{path}: no target_id (the name runs go by)",
            suggestions=[f'add target_id = "{target.split(":")[0].rsplit(".", 1)[-1]}"'],
        )
    if not isinstance(target_id, str) or not _TARGET_ID_RE.match(target_id):
        raise where.error(
            "",
            "target_id",
            f"target_id must be a short name (up to 100 letters, digits, . _ - space), got {target_id!r:.60}",
        )
    t_unit = raw.get("t_unit", "steps")
    if not isinstance(t_unit, str) or not t_unit:
        raise where.error("", "t_unit", f"t_unit must be a name such as steps, got {t_unit!r}")
    replicates = raw.get("replicates")
    if replicates is None:
        raise ProveError(f"{path}: no replicates (add replicates = 200)")
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise where.error("", "replicates", f"replicates must be a positive integer, got {replicates!r}")
    budget = raw.get("budget")
    number = isinstance(budget, int | float) and not isinstance(budget, bool)
    usable = number and isinstance(budget, int | float) and budget > 0 and math.isfinite(budget)
    if budget is not None and not usable:
        raise where.error(
            "", "budget", f"budget must be a positive number of dollars, got {budget!r}"
        )

    axes, raw = _axes(where, raw, stored=stored)
    if "declare" not in raw:
        raise ProveError(f"{path}: no [declare] table (outcomes, failures, successes)")
    outcomes, failures, successes = _declare(where, raw["declare"])
    capture = parse_capture(where, raw["capture"]) if "capture" in raw else Capture()
    chaos = parse_chaos(where.error, raw["chaos"], {a.name: a.values for a in axes}) if "chaos" in raw else {}

    backends: dict[str, dict[str, Any]] = {}
    for name in BACKEND_TABLES:
        if name not in raw:
            continue
        if not isinstance(raw[name], Mapping):
            raise where.error("", name, f"[{name}] must be a table")
        try:
            backends[name] = validate_backend_table(name, raw[name], str(path))
        except ProveError as err:
            key = re.search(r"key '([^']+)'|\] (\w+) must", err.message)
            line = where.line_of(name, (key.group(1) or key.group(2)) if key else None)
            message = err.message.replace(f"{path}:", f"{path}:{line}:", 1) if line else err.message
            raise ProveError(message, suggestions=err.suggestions) from None
    return SweepSpec(
        path=path,
        raw=raw,
        target=target,
        target_id=target_id,
        t_unit=t_unit,
        replicates=replicates,
        axes=axes,
        outcomes=outcomes,
        failures=failures,
        successes=successes,
        budget=None if budget is None else float(budget),
        case_axis=next((axis.name for axis in axes if axis.cases), None),
        capture=capture,
        chaos=chaos,
        backends=backends,
    )


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep spec file."""
    spec_path = Path(path)
    if not spec_path.exists():
        raise ProveError(
            f"no sweep spec at {spec_path}",
            suggestions=["poisson-prove init --example"],
        )
    if spec_path.is_dir():
        raise ProveError(
            f"{spec_path} is a folder, not a sweep spec", suggestions=["name the spec's .toml file"]
        )
    try:
        text = read_regular_text(spec_path)
    except NotRegularFile as err:
        raise ProveError(
            f"{spec_path} is {err.kind}, not a sweep spec; a spec is read from a regular file",
            suggestions=["name the spec's .toml file (poisson-prove init writes one)"],
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ProveError(f"cannot read the sweep spec {spec_path}: {err}") from None
    return parse_spec(text, spec_path)


def spec_from_manifest(raw: Mapping[str, Any], spec_path: str) -> SweepSpec:
    """The spec a stored run was made from (its manifest keeps the spec as read, a case axis's
    ids from a file among them: the file is not read again)."""
    return _validate(dict(raw), Path(spec_path), Where(Path(spec_path), ""), stored=True)
