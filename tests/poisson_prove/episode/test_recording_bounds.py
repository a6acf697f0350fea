"""max_observation_bytes is a hard limit in bytes, whatever the value (checked by hypothesis)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from poisson_prove.episode.capture import kept_attributes
from poisson_prove.episode.recording import bounded

scalars = st.one_of(st.text(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
values = st.one_of(scalars, st.lists(st.one_of(st.text(), st.integers()), max_size=8))


def _size(value: object) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


@given(values, st.integers(min_value=1, max_value=80))
def test_a_bounded_value_never_exceeds_the_limit(value: object, limit: int) -> None:
    out = bounded(value, limit)
    if value is None or isinstance(value, bool):
        assert out is value
        return
    assert _size(out) <= limit
    if _size(value) <= limit:
        assert out == value  # short values are stored as they are


def test_a_cut_string_keeps_whole_characters_and_says_it_was_cut() -> None:
    assert bounded("é" * 10, 8) == "éé…"  # 2 + 2 + 3 bytes: a third é would not fit
    assert bounded("abcdef", 3) == "abc"  # too small for the mark


def test_the_allow_list_keeps_no_query_and_no_content() -> None:
    kept = kept_attributes(
        {
            "http.url": "https://user:pw@api.example.com:8443/v1/chat?key=SECRET#frag",
            "http.target": "/v1/chat?key=SECRET",
            "url.query": "key=SECRET",
            "gen_ai.usage.input_tokens": 12,
            "gen_ai.system_instructions": "SECRET",
            "gen_ai.response.finish_reasons": ("stop",),
        },
        content=False,
        limit=1000,
    )
    assert kept == {
        "http.url": "https://api.example.com:8443/v1/chat",
        "http.target": "/v1/chat",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.response.finish_reasons": ["stop"],
    }
