"""Score values to outcomes, and the outcomes an import declares for a scorer's values."""

from __future__ import annotations

import pytest

from poisson_prove.errors import ProveError
from poisson_prove.importers.outcomes import OutcomeMapping, value_key, value_kind


def test_default_mapping_reads_inspect_letters_numbers_and_booleans() -> None:
    mapping = OutcomeMapping()
    assert [mapping.outcome(v) for v in ("C", "I", "P", "N", 1, 0.0, "1.0", True, False, 0.5)] == [
        "correct",
        "incorrect",
        "partial",
        "incorrect",
        "correct",
        "incorrect",
        "correct",
        "correct",
        "incorrect",
        "partial",
    ]
    assert mapping.outcome(2) is None and mapping.outcome("Paris") is None
    overridden = mapping.with_overrides(["P=incorrect", "N=no_answer"])
    assert (overridden.outcome("P"), overridden.outcome("N")) == ("incorrect", "no_answer")
    assert overridden.explicit == {"P", "N"}
    with pytest.raises(ProveError) as bad:
        mapping.with_overrides(["P"])
    assert bad.value.exit_code == 2


def test_values_are_looked_up_by_one_text_per_value() -> None:
    assert value_key(1) == value_key(1.0) == value_key("1.0") == value_key("1") == "1"
    assert value_key(True) == value_key("True") == "true"
    assert value_key(0.25) == "0.25" and value_key("nan") == "nan"
    assert [value_kind(v) for v in ("C", 1, 0.5, "0", True, "false", "nan")] == [
        "letter",
        "number",
        "number",
        "number",
        "boolean",
        "boolean",
        "letter",
    ]


@pytest.mark.parametrize(
    ("values", "overrides", "declared"),
    [
        (["C", "I", "C"], [], ["correct", "incorrect"]),  # includes(): no phantom partial
        (["C", "C"], [], ["correct", "incorrect"]),  # a perfect run still declares its failure
        (["C", "P", "I"], [], ["correct", "incorrect", "partial"]),
        ([1.0, 0.5], [], ["correct", "incorrect", "partial"]),
        ([1, 0], [], ["correct", "incorrect"]),
        ([True, False], [], ["correct", "incorrect"]),
        ([], [], ["correct", "incorrect"]),  # every sample errored
        (["C", "I"], ["P=partial"], ["correct", "incorrect", "partial"]),  # --map names it
        (["C", "I"], ["I=wrong"], ["correct", "wrong"]),
        (["C", "N"], ["N=no_answer"], ["correct", "incorrect", "no_answer"]),
    ],
)
def test_declared_outcomes_are_those_the_scorer_can_give(
    values: list[object], overrides: list[str], declared: list[str]
) -> None:
    assert OutcomeMapping().with_overrides(overrides).declared(values) == declared


def test_declared_outcomes_take_any_iterable_once() -> None:
    assert OutcomeMapping().declared(iter(["C", "P"])) == ["correct", "incorrect", "partial"]
