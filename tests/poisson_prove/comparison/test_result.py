"""comparison/result.py: the frozen result every renderer draws. Built here by a real
comparison of two stored runs, then read through its own properties: the method's phrase, what
`check` gates on, the comparisons log's line and the plain-dict form."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import poisson_prove
from poisson_prove.comparison.result import (
    CASE_CONDITION_FIELDS,
    CASE_FIELDS,
    CASE_ROW_FIELDS,
    LOGRANK_ROW_FIELDS,
    METHOD_NAMES,
    METHOD_PHRASES,
    Comparison,
    ConditionResult,
    RunSide,
)
from tests.poisson_prove.runs import from_outcomes, write_run

N = 200


def outcomes(**counts: int) -> list[str | None]:
    out: list[str | None] = []
    for name, count in counts.items():
        out += [None if name == "error" else name] * count
    return out + ["resolved"] * (N - len(out))


@pytest.fixture
def comparison(tmp_path: Path) -> Comparison:
    before = write_run(tmp_path, from_outcomes({("refund", 0.0): outcomes(unresolved=20, error=3)}), name="a")
    after = write_run(
        tmp_path, from_outcomes({("refund", 0.0): outcomes(unresolved=90)}), name="b", paired_with=before
    )
    return poisson_prove.compare(before.name, after.name, store=tmp_path)


def test_a_result_holds_and_never_changes(comparison: Comparison) -> None:
    assert isinstance(comparison.before, RunSide) and comparison.before.name == "a"
    assert (comparison.method, comparison.paired, comparison.headline.word) == ("mcnemar", True, "worse")
    with pytest.raises(dataclasses.FrozenInstanceError):
        comparison.q = 0.1  # type: ignore[misc]
    condition = comparison.conditions[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        condition.verdict = "safer"  # type: ignore[misc]


def test_method_phrase_follows_the_method_and_the_sequential_block(comparison: Comparison) -> None:
    assert set(METHOD_PHRASES) == set(METHOD_NAMES) == {"mcnemar", "fisher", "logrank_bh"}
    assert comparison.method_phrase == "paired test on shared seeds"
    fisher = dataclasses.replace(comparison, method="fisher")
    assert fisher.method_phrase == "Fisher exact test on independent runs"
    sequential = dataclasses.replace(comparison, sequential={"run": "b", "looks": {}})
    assert sequential.method_phrase == "group-sequential paired test on shared seeds"
    # log-rank names the rate test run beside it (the runs' default), even on a sequential run
    logrank = dataclasses.replace(sequential, method="logrank_bh", rate_method="mcnemar")
    assert logrank.method_phrase == "cause-specific log-rank test and McNemar on the rates"
    assert dataclasses.replace(logrank, rate_method="fisher").method_phrase == (
        "cause-specific log-rank test and Fisher on the rates"
    )


@pytest.mark.parametrize(
    ("verdicts", "gated"),
    [
        (("worse",), True),
        (("safer", "trade"), True),  # a trade is a rise somewhere: check gates on it
        (("safer", "no change", "not tested"), False),
        ((), False),
    ],
)
def test_any_worse_is_a_worse_or_a_trade_anywhere(
    comparison: Comparison, verdicts: tuple[str, ...], gated: bool
) -> None:
    template: ConditionResult = comparison.conditions[0]
    conditions = tuple(dataclasses.replace(template, verdict=v) for v in verdicts)
    assert dataclasses.replace(comparison, conditions=conditions).any_worse is gated


def test_the_log_entry_is_the_comparisons_logs_line(comparison: Comparison) -> None:
    before, after = comparison.before, comparison.after
    assert comparison.log_entry("check") == {
        "command": "check",
        "before": {"run_id": before.run_id, "name": "a", "done": N, "status": "complete"},
        "after": {"run_id": after.run_id, "name": "b", "done": N, "status": "complete"},
        "method": "mcnemar",
        "event": None,
        "q": 0.05,
        "headline": "worse",
        "counts": {c.outcome: {"safer": c.safer, "worse": c.worse} for c in comparison.headline.counts},
    }
    assert comparison.log_entry("diff")["counts"]["unresolved"] == {"safer": 0, "worse": 1}


def test_to_dict_is_every_field_plus_the_derived_ones_as_plain_json(comparison: Comparison) -> None:
    document = comparison.to_dict()
    # without a case axis (and without imported sources) the benchmark fields are left out:
    # the document is the one it always was
    # (nor, without --method logrank_bh, the rate test beside log-rank)
    left_out = {*CASE_FIELDS, "source_differences", "rate_method"}
    fields = [f.name for f in dataclasses.fields(Comparison) if f.name not in left_out]
    assert list(document) == [*fields, "method_phrase", "any_worse"]
    condition = document["conditions"][0]
    assert not set(CASE_CONDITION_FIELDS) & set(condition)
    assert not {*CASE_ROW_FIELDS, *LOGRANK_ROW_FIELDS} & set(condition["outcomes"][0])
    assert not set(LOGRANK_ROW_FIELDS) & set(condition["any_failure"] or {})
    assert (document["method_phrase"], document["any_worse"]) == ("paired test on shared seeds", True)
    assert json.loads(json.dumps(document, allow_nan=False)) == json.loads(json.dumps(document))
    assert document["before"]["without_outcome"] == 3 and document["after"]["without_outcome"] == 0
    row = document["conditions"][0]["outcomes"][0]
    assert row["outcome"] == "unresolved" and row["verdict"] == "rose"
    assert row["before"]["k"] == 20 and row["after"]["k"] == 90
