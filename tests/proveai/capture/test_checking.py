"""Running checks on a closed trace: triggers, a raising check kept as skip, return forms, the outcome."""

from __future__ import annotations

import pytest

from proveai import Check, CheckResult, RuleCheck, assert_json
from tests.proveai.capture.checks_kit import labels, run


def test_triggers_gate_checks_and_passed_reads_earlier_results():
    calls = []

    def expensive(t) -> bool:
        calls.append(t.trace_id)
        return True

    checks = [
        assert_json("classify"),
        RuleCheck("expensive", expensive, trigger=lambda t: t.passed("json_valid")),
        RuleCheck("always", lambda t: "good", trigger=lambda t: True),
    ]
    bad = run("oops", checks)
    assert labels(bad) == {"json_valid": "bad", "expensive": "skip", "always": "good"}
    assert bad.check_results[1].reason == "trigger not met" and calls == []
    good = run("[1, 2]", checks)
    assert labels(good) == {"json_valid": "good", "expensive": "good", "always": "good"}
    assert calls == [good.trace_id]
    assert good.passed("json_valid") and not bad.passed("json_valid") and not good.passed("nope")


def test_a_raising_check_or_trigger_is_recorded_never_raised():
    class Flaky(Check):
        name = "flaky"

        def __call__(self, trace):
            raise ConnectionError("judge unreachable")

    def boom(t):
        raise ZeroDivisionError("no")

    t = run("x", [Flaky(), RuleCheck("trig", lambda t: True, trigger=boom), RuleCheck("ok", lambda t: True)])
    expected = [("flaky", "skip"), ("trig", "skip"), ("ok", "good")]
    assert [(r.name, r.label) for r in t.check_results] == expected
    assert t.check_results[0].reason == "check raised ConnectionError: judge unreachable"
    assert t.outcome == "good"


def test_custom_check_subclass_and_rule_return_forms():
    class Short(Check):
        name = "short"
        agent = "classify"

        def __call__(self, trace):
            span = trace.span("classify")
            return CheckResult("short", "good" if len(span.output) < 5 else "bad", 0.5, "len", "classify")

    t = run("abc", [Short(), RuleCheck("tuple", lambda t: ("bad", "why")), RuleCheck("odd", lambda t: 42)])
    assert [(r.name, r.label, r.reason) for r in t.check_results] == [
        ("short", "good", "len"), ("tuple", "bad", "why"), ("odd", "skip", "check returned int, not a label"),
    ]


@pytest.mark.parametrize(
    ("labels_in", "expected"),
    [
        ([], None),
        (["good"], "good"),
        (["good", "skip"], "good"),
        (["skip", "skip"], "skip"),
        (["good", "warn"], "skip"),
        (["good", "bad", "skip"], "bad"),
        (["warn", "bad"], "bad"),
    ],
)
def test_composite_outcome_rule(labels_in, expected):
    def constant(label: str):
        return lambda t: label

    checks = [RuleCheck(f"c{i}", constant(label)) for i, label in enumerate(labels_in)]
    assert run("x", checks).outcome == expected


def test_a_plain_function_check_is_named_after_the_function_whatever_it_returns():
    def is_upper(t) -> bool:
        return True

    def labelled(t) -> str:
        return "bad"

    def explained(t) -> tuple:
        return ("bad", "why")

    class Callable:
        def __call__(self, t) -> bool:
            return False

    t = run("x", [is_upper, labelled, explained, Callable()])
    assert [(r.name, r.label) for r in t.check_results] == [
        ("is_upper", "good"), ("labelled", "bad"), ("explained", "bad"), ("Callable", "bad"),
    ]
