"""engine/propagation.py: from each failure back to the agent it started at, on real captured
traces. Root causes come first (the most severe first), each followed by the agents it
affected; every diagnosis learns its root cause."""

from __future__ import annotations

from typing import Any

from proveai import monitor, trace
from proveai.engine.layers import Analysis, EngineSettings, checks_layer, errors_layer, loops_layer
from proveai.engine.propagation import agent_graph, propagate
from tests.proveai.engine import pipelines


def analysed(captured: Any) -> Analysis:
    """The trace after the layers before propagation, as the engine runs them."""
    analysis = Analysis(captured, EngineSettings())
    for layer in (checks_layer, errors_layer, loops_layer):
        analysis.diagnoses.extend(layer(analysis).findings)
    return analysis


def test_the_agent_graph_is_who_called_whom() -> None:
    assert dict(agent_graph(pipelines.run("clean"))) == {
        "researcher": {"planner"},
        "synthesizer": {"researcher"},
        "reviewer": {"synthesizer"},
    }


def test_nothing_flagged_has_nothing_to_trace_back() -> None:
    outcome, links = propagate(analysed(pipelines.run("clean")))
    assert (outcome.status, outcome.summary, links) == ("clean", "nothing to trace back", [])


def test_a_failure_downstream_of_a_raised_exception_is_blamed_on_the_agent_that_raised() -> None:
    analysis = analysed(pipelines.run("exception"))
    outcome, links = propagate(analysis)
    assert outcome.status == "flagged"
    assert outcome.summary == "root cause: researcher; 1 agent(s) affected downstream"
    assert [(link.agent_name, link.role, link.parent_agent, link.root_cause_agent) for link in links] == [
        ("researcher", "root_cause", None, "researcher"),
        ("synthesizer", "propagated", "researcher", "researcher"),
    ]
    root, downstream = links
    assert root.severity == "critical" and len(root.evidence) == 2  # both raising calls
    assert all(text.startswith("errors: raised ConnectionError") for text in root.evidence)
    follows = "fix researcher first: this failure follows from it"
    assert downstream.remediation == dict.fromkeys(downstream.failure_modes, follows)
    assert all(hint.startswith("fix the exception in researcher") for hint in root.remediation.values())
    assert {d.root_cause_agent for d in analysis.diagnoses} == {"researcher"}
    assert all(d.root_cause.startswith("researcher: raised ConnectionError") for d in analysis.diagnoses)


def test_a_caller_that_only_re_raised_is_affected_not_a_root_cause() -> None:
    @monitor("inner")
    def inner() -> None:
        raise KeyError("missing order")

    @monitor("outer")
    def outer() -> None:
        inner()

    with trace("reraise", exporters=[]) as t:
        try:
            outer()
        except KeyError:
            pass
    _, links = propagate(analysed(t))
    assert [(link.agent_name, link.role, link.parent_agent) for link in links] == [
        ("inner", "root_cause", None),
        ("outer", "propagated", "inner"),
    ]


def test_independent_failures_are_separate_root_causes_most_severe_first() -> None:
    @monitor("checker")
    def checker() -> None:
        raise ValueError("bad schema")

    @monitor("looper")
    def looper() -> str:
        return "again"

    with trace("two-failures", exporters=[]) as t:
        for _ in range(5):
            looper()  # medium: over the limit of 3 without a baseline
        try:
            checker()  # critical: it raised
        except ValueError:
            pass
    outcome, links = propagate(analysed(t))
    assert [(link.agent_name, link.role, link.severity) for link in links] == [
        ("checker", "root_cause", "critical"),
        ("looper", "root_cause", "medium"),
    ]
    assert outcome.summary == "root cause: checker, looper"
