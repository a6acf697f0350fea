"""engine/layers.py: each detection layer on real captured traces of the research pipeline
(tests/proveai/engine/pipelines.py), with and without a baseline of known-good runs: what it
finds, at which agent, how severe, and the summary line it says when it finds nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from proveai import monitor, trace
from proveai.engine.baseline import BaselineProfile
from proveai.engine.layers import (
    Analysis,
    EngineSettings,
    checks_layer,
    errors_layer,
    judge_layer,
    loops_layer,
    path_layer,
)
from proveai.engine.taxonomy import LAYER_MODES
from tests.proveai.engine import pipelines


@pytest.fixture(scope="module")
def baseline() -> BaselineProfile:
    return BaselineProfile.of("good", [pipelines.run("clean", seed=seed) for seed in range(3)])


def analysis(trace_or_mode: Any, **settings: Any) -> Analysis:
    captured = pipelines.run(trace_or_mode) if isinstance(trace_or_mode, str) else trace_or_mode
    return Analysis(captured, EngineSettings(**settings))


def found(outcome: Any) -> list[tuple[str, str, str]]:
    return [(d.agent_name, d.layer, d.severity) for d in outcome.findings]


def test_a_clean_run_is_clean_in_every_layer_that_can_run(baseline: BaselineProfile) -> None:
    plain = analysis("clean")
    checked = checks_layer(plain)
    assert (checked.status, checked.summary) == ("clean", "2 check(s) ran, none failed")
    assert errors_layer(plain).summary == "no span raised (5 span(s))"
    assert loops_layer(plain).summary == "every agent ran within its usual count"
    assert path_layer(plain).status == "skipped"
    with_baseline = analysis("clean", baseline=baseline)
    assert path_layer(with_baseline).summary == "same agent graph as the baseline good"
    assert plain.diagnoses == [] and plain.flags == []


def test_a_failed_check_is_a_finding_at_its_agent() -> None:
    outcome = checks_layer(analysis("check"))
    assert (outcome.status, outcome.summary) == ("flagged", "1 finding(s) at synthesizer")
    (finding,) = outcome.findings
    assert (finding.agent_name, finding.severity, finding.confidence) == ("synthesizer", "high", 1.0)
    assert finding.failure_modes == (LAYER_MODES["checks"],)
    assert finding.evidence == "check regex_match failed: synthesizer output does not match /\\[\\d+\\]/"
    assert finding.span_id is not None
    with trace("unchecked", exporters=[]) as unchecked:
        pass
    assert checks_layer(analysis(unchecked)).summary == "no checks ran on this trace at capture time"


def test_an_exception_is_blamed_on_the_agent_that_raised_not_the_callers_that_passed_it_on() -> None:
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
    checked = analysis(t)
    outcome = errors_layer(checked)
    by_agent = {d.agent_name: d for d in outcome.findings}
    assert (by_agent["inner"].verdict, by_agent["inner"].severity) == ("raised", "critical")
    assert by_agent["inner"].evidence.startswith("raised KeyError")
    assert (by_agent["outer"].verdict, by_agent["outer"].caused_by) == ("re-raised", "inner")
    assert by_agent["outer"].severity == "high" and by_agent["outer"].evidence.endswith("from inner")
    assert checked.flags == ["exception:inner"]  # only the agent that raised is an exception flag

    pipeline = errors_layer(analysis("exception"))
    assert found(pipeline) == [("researcher", "errors", "critical")] * 2  # it raised on both calls
    assert pipeline.findings[0].evidence.startswith("raised ConnectionError: search backend refused")


def test_a_loop_is_over_the_limit_without_a_baseline_or_over_the_baselines_most(
    baseline: BaselineProfile,
) -> None:
    looped = analysis("loop")
    (finding,) = loops_layer(looped).findings
    assert (finding.agent_name, finding.severity, finding.confidence) == ("researcher", "medium", 1.0)
    assert finding.evidence == (
        "ran 6 times; the limit without a baseline for it is 3 (--max-iterations); "
        "6 calls had identical inputs"
    )
    assert looped.loops == [{"agent_name": "researcher", "iterations": 6, "usual": 3, "flagged": True}]
    (against,) = loops_layer(analysis("loop", baseline=baseline)).findings
    assert (against.severity, against.confidence) == ("high", 1.0)  # more than every known-good run
    assert against.evidence.startswith("ran 6 times; known-good runs (good) make at most 2")
    assert loops_layer(analysis("loop", max_iterations=6)).findings == ()


def test_parallel_calls_of_one_agent_count_once() -> None:
    @monitor("fetch", parent_agent="planner")
    async def fetch(n: int) -> int:
        await asyncio.sleep(0.01)
        return n

    @monitor("planner")
    async def plan(together: bool) -> None:
        if together:
            await asyncio.gather(*(fetch(n) for n in range(5)))
        else:
            for n in range(5):
                await fetch(n)

    def captured(together: bool) -> Any:
        async def run() -> Any:
            with trace("fan-out", exporters=[]) as t:
                await plan(together)
            return t

        return asyncio.run(run())

    assert loops_layer(analysis(captured(True))).findings == ()  # five at once: one step
    assert found(loops_layer(analysis(captured(False)))) == [("fetch", "loops", "medium")]


def test_the_path_is_compared_with_the_known_good_graph(baseline: BaselineProfile) -> None:
    (extra,) = path_layer(analysis("path", baseline=baseline)).findings
    assert (extra.agent_name, extra.severity, extra.confidence) == ("researcher", "medium", 1.0)
    assert extra.evidence == "researcher called web_scraper, which none of 3 known-good run(s) do"
    with trace("research-pipeline", exporters=[]) as short:
        pipelines.planner("tidal power")
    (missing,) = path_layer(analysis(short, baseline=baseline)).findings
    assert missing.agent_name == "planner"
    assert missing.evidence == "planner did not call researcher, as 100% of known-good runs do"
    assert path_layer(analysis("path")).summary == "no baseline: start the engine with --baseline NAME"


def test_the_judge_runs_only_when_asked_with_a_baseline_and_something_flagged(
    baseline: BaselineProfile,
) -> None:
    off = judge_layer(analysis("check"))
    assert off.status == "skipped"
    assert off.summary == "off: start the engine with --judge-model MODEL to enable it"
    assert judge_layer(analysis("check", judge_model="gpt-4o-mini")).summary == (
        "needs a baseline to compare with: --baseline NAME"
    )
    clean = analysis("clean", judge_model="gpt-4o-mini", baseline=baseline)
    nothing = judge_layer(clean)
    assert (nothing.status, nothing.summary) == ("skipped", "nothing flagged to examine")
