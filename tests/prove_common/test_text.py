"""value_as_text: the one rule for a value as text."""

from __future__ import annotations

import json

from prove_common.text import TRUNCATED, value_as_text


def test_a_string_is_itself() -> None:
    for text in ["", "plain", "[/oops]", '{"a": 1}', "ünïcödé\nline two"]:
        assert value_as_text(text) == text


def test_anything_else_is_sorted_compact_json_keeping_non_ascii() -> None:
    assert value_as_text({"b": 1, "a": "ü"}) == '{"a": "ü", "b": 1}'
    assert value_as_text([1, None, True]) == "[1, null, true]"
    assert value_as_text(None) == "null"
    assert value_as_text(3.5) == "3.5"
    # two equal dicts built in a different order read the same
    assert value_as_text({"x": 1, "y": 2}) == value_as_text({"y": 2, "x": 1})


def test_what_json_cannot_hold_is_written_with_str() -> None:
    class Agent:
        def __str__(self) -> str:
            return "agent<writer>"

    assert value_as_text({"who": Agent()}) == '{"who": "agent<writer>"}'


def test_lines_indents_a_structure_for_a_line_diff() -> None:
    value = {"b": [1, 2], "a": "ü"}
    text = value_as_text(value, lines=True)
    assert text == json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)
    assert text.splitlines()[1] == '  "a": "ü",'


def test_limit_clips_and_says_so() -> None:
    assert value_as_text("abcdef", limit=3) == "abc" + TRUNCATED
    assert value_as_text("abc", limit=3) == "abc"
    assert value_as_text([1, 2, 3], limit=4) == "[1, " + TRUNCATED
