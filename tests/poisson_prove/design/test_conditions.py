"""Condition keys and labels: the stored `cell` column's text and what users read."""

from __future__ import annotations

from poisson_prove.design.conditions import condition_key, condition_label, pooled_key


def test_cell_key_ignores_order_and_label_follows_spec_order() -> None:
    assert condition_key({"b": 1, "a": "x"}) == condition_key({"a": "x", "b": 1})
    assert condition_label({"tool_fail_rate": 0.55, "task_id": "refund"}, ["task_id", "tool_fail_rate"]) == (
        "task_id refund · tool_fail_rate 0.55"
    )


def test_the_pooled_group_of_a_condition_is_its_key_without_the_case() -> None:
    cfg = {"ticket": "t1", "model": "a", "temp": 0.7}
    assert pooled_key(cfg, "ticket") == condition_key({"model": "a", "temp": 0.7})
    assert pooled_key({"ticket": "t9", "temp": 0.7, "model": "a"}, "ticket") == pooled_key(cfg, "ticket")
    assert pooled_key({"ticket": "t1"}, "ticket") == "all"
