"""Tier 1: text_diff, volatile-token masking and the per-kind structural checks."""

from __future__ import annotations

import pytest

from proveai import text_diff
from proveai.diff.grading import grade_outputs
from proveai.diff.tier1 import mask_volatile, numbers_of, tier1_for_kind
from proveai.diff.verdict import Tier


def test_json_deep_equal_ignores_key_order_and_reads_json_strings() -> None:
    result = text_diff({"a": 1, "b": [1, 2]}, '{"b": [1, 2], "a": 1}')
    assert (result["equal"], result["kind"]) == (True, "json")
    changed = text_diff({"a": 1}, {"a": 2})
    assert (changed["equal"], changed["kind"]) == (False, "json")
    assert '-  "a": 1' in changed["unified"] and '+  "a": 2' in changed["unified"]


def test_factual_swap_is_numeric_and_formatting_is_not() -> None:
    swap = text_diff("Refund of $1,200 approved.", "Refund of $12,000 approved.")
    assert (swap["equal"], swap["kind"]) == (False, "numeric")
    assert "-Refund of $1,200" in swap["unified"]
    same = text_diff("Total: $1,200.00", "Total:   $1200")
    assert same["kind"] == "text" and not same["equal"]  # different text, same numbers
    assert text_diff("50% off", "50 off")["kind"] == "numeric"  # a unit changed


def test_whitespace_only_difference_is_equal_with_a_diff_anyway() -> None:
    result = text_diff("hello   world\n", " hello world")
    assert (result["equal"], result["kind"]) == (True, "text")
    assert result["unified"].startswith("--- old\n+++ new")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "order 3f2a9c1e-1b2c-4d3e-8f90-123456789abc done",
            "order 0b7e2d11-aaaa-4bbb-8ccc-000000000001 done",
        ),
        ("at 2026-01-31T12:00:00Z", "at 2026-02-01T08:30:15.123+02:00"),
        ("on 2026-01-31", "on 2025-12-24"),
        ("request req_8AbC9x12zz ok", "request req_77QQ11aa00 ok"),
        ("commit deadbeef1234 built", "commit 0badc0ffee99 built"),
        ("at 1732900000000 ms", "at 1732900999999 ms"),
    ],
)
def test_volatile_tokens_are_not_a_factual_swap(old: str, new: str) -> None:
    result = text_diff(old, new)
    assert result["kind"] == "text" and result["volatile_only"] and not result["equal"]
    verdict = grade_outputs(old, new)
    assert (verdict.status, verdict.tier) == ("drifted", Tier.TIER1)


def test_masking_keeps_real_numbers() -> None:
    assert mask_volatile("id 3f2a9c1e-1b2c-4d3e-8f90-123456789abc costs $5") == "id <uuid> costs $5"
    assert numbers_of("gpt-4o costs -5 and $1,200 in 2026-01-01") == numbers_of("gpt-4o costs -5 and $1200")


def test_per_kind_tier1() -> None:
    docs_a = [{"id": "d1", "text": "x"}, {"id": "d2", "text": "y"}]
    docs_b = [{"id": "d2", "text": "changed text"}, {"id": "d1", "text": "x"}]
    assert tier1_for_kind("RETRIEVER", docs_a, docs_b).status == "unchanged"
    lost = tier1_for_kind("RETRIEVER", docs_a, [{"id": "d1"}, {"id": "d9"}])
    assert lost.status == "regressed" and "+d9" in lost.rationale and "-d2" in lost.rationale
    assert tier1_for_kind(
        "TOOL", {"a": 1}, {"a": 1}, name="crm", old_inputs={"q": 1}, new_inputs={"q": 1}
    ).status == ("unchanged")
    args = tier1_for_kind("TOOL", {"a": 1}, {"a": 1}, name="crm", old_inputs={"q": 1}, new_inputs={"q": 2})
    assert args.status == "regressed" and "args" in args.rationale
    assert tier1_for_kind("EMBEDDING", [1.0, 0.0], [0.999, 0.01]).status == "unchanged"
    assert tier1_for_kind("EMBEDDING", [1.0, 0.0], [0.0, 1.0]).status == "regressed"
    assert tier1_for_kind("PARSER", '{"x": [1]}', {"x": [1]}).status == "unchanged"
    assert tier1_for_kind("PARSER", {"x": 1}, {"x": 2}).status == "regressed"
    assert tier1_for_kind("CHAT_MODEL", "a", "b") is None
