"""Captured values made JSON-safe and bounded, for the values the monitor tests do not pass:
deep or self-referencing structures, subclasses of str/int/float, values that refuse to dump."""

from __future__ import annotations

import enum
import json

from proveai.traces.jsonsafe import TRUNCATION_MARKER, to_jsonable


class Colour(enum.IntEnum):
    RED = 1


class Mood(enum.StrEnum):
    CALM = "calm"


class Ratio(float):
    pass


class RefusesToDump:
    def model_dump(self, mode: str) -> dict:
        raise RuntimeError("validation failed")

    def __repr__(self) -> str:
        return "<RefusesToDump>"


class RefusesToPrint:
    def __repr__(self) -> str:
        raise ValueError("no repr")


def strict_json(value: object) -> str:
    return json.dumps(value, allow_nan=False)  # what an OTLP string attribute must hold


def depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def test_subclasses_become_their_plain_json_kind() -> None:
    got = to_jsonable({"colour": Colour.RED, "mood": Mood.CALM, "ratio": Ratio(0.5), "inf": Ratio("inf")})
    assert got == {"colour": 1, "mood": "calm", "ratio": 0.5, "inf": "inf"}
    assert [type(v) for v in got.values()] == [int, str, float, str]
    strict_json(got)


def test_deep_and_self_referencing_values_are_cut_not_a_recursion_error() -> None:
    loop: list = []
    loop.append(loop)
    deep: dict = {}
    node = deep
    for _ in range(100):
        node["next"] = {}
        node = node["next"]
    for value in (loop, deep):
        got = to_jsonable(value)
        strict_json(got)
        assert 30 <= depth(got) <= 33  # structure kept to a bounded depth, the rest as repr text


def test_values_that_refuse_to_dump_or_print_are_still_captured() -> None:
    got = to_jsonable([RefusesToDump(), RefusesToPrint()])
    assert got == ["<RefusesToDump>", "<unrepresentable RefusesToPrint>"]


def test_a_structure_over_the_bound_is_kept_as_its_json_text_cut_and_marked() -> None:
    value = {"rows": list(range(50))}
    text = json.dumps(value, ensure_ascii=False)
    got = to_jsonable(value, bound=40)
    assert got == text[:40] + TRUNCATION_MARKER.format(n=len(text) - 40)
    assert to_jsonable(value, bound=len(text)) == value  # at the bound: kept structured
