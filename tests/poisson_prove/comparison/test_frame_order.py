"""The order of conditions in a comparison: the manifests' order, then the rest sorted."""

from __future__ import annotations

from types import SimpleNamespace

from poisson_prove.comparison.frame import condition_order


def _frame(cells: list[object], present: list[str]) -> SimpleNamespace:
    manifest = {"cells": [{"key": key} if not isinstance(key, dict) else key for key in cells]}
    return SimpleNamespace(info=SimpleNamespace(manifest=manifest), condition=SimpleNamespace(values=present))


def test_the_after_runs_manifest_leads_then_the_before_runs_then_the_rest_sorted() -> None:
    before = _frame(["b", "a", "gone"], ["a", "b", "z-extra", "m-extra"])
    after = _frame(["c", "a", "c", None, 7, ["not", "hashable"]], ["a", "c"])
    assert condition_order(before, after) == ["c", "a", "b", "m-extra", "z-extra"]


def test_a_benchmarks_thousands_of_conditions_keep_their_manifest_order() -> None:
    keys = [f"case={n:05d}" for n in range(20_000)][::-1]  # listed in reverse: not sorted
    assert condition_order(_frame(keys, keys), _frame(keys, keys)) == keys
