"""A row's JSON columns: meta strict (what the user stores), spans lenient (what was captured)."""

from __future__ import annotations

import json
import math

import pytest

from poisson_prove.episode.row import meta_json, spans_json


def test_meta_is_compact_json_a_reader_gets_back() -> None:
    meta = {"case_id": "refund", "tools": ["search", "pay"], "cost": 0.25, "note": "café"}
    text = meta_json(meta)
    assert json.loads(text) == meta
    assert " " not in text.replace("café", "") and "café" in text


@pytest.mark.parametrize("bad", [{"x": math.nan}, {"x": math.inf}, {"x": object()}, {"x": {1, 2}}])
def test_meta_json_cannot_hold_is_refused(bad: dict) -> None:
    with pytest.raises((ValueError, TypeError)):
        meta_json(bad)


def test_a_circular_meta_is_refused_and_the_next_one_still_encodes() -> None:
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(ValueError):
        meta_json(loop)
    assert meta_json({"case_id": "a"}) == '{"case_id":"a"}'  # the encoder's markers were reset


def test_spans_keep_what_json_cannot_hold_as_its_repr() -> None:
    class Token:
        def __repr__(self) -> str:
            return "Token(7)"

    text = spans_json([{"name": "tool", "value": Token()}])
    assert json.loads(text) == [{"name": "tool", "value": "Token(7)"}]
