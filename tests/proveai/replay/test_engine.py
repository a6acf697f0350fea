"""replay_span / replay_trace / attribute_edges on traces captured for real through the fake server."""

from __future__ import annotations

import pytest

from proveai import attribute_edges, replay_span, replay_trace
from proveai.cache import ResponseCache
from proveai.diff.verdict import Tier
from proveai.providers import OpenAICompatibleProvider, reset_providers
from tests.proveai.model_server import ModelServer
from tests.proveai.replay.pipeline import DRAFT_PROMPT, run_pipeline


@pytest.fixture
def routed(model_server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> ModelServer:
    """gpt-* and claude-* (the judge) routed to the fake server, as a user's .env would."""
    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "gpt-*,claude-*")
    monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", model_server.openai_url)
    reset_providers()
    return model_server


def _by_agent(verdicts):
    return {v.child: v for v in verdicts}


def test_replaying_unchanged_code_grades_every_agent_unchanged(routed: ModelServer, tmp_path) -> None:
    captured = run_pipeline("My order arrived broken")
    assert routed.count() == 3
    cache = ResponseCache(root=tmp_path / "c")
    replayed = replay_trace(captured, cache=cache)
    verdicts = attribute_edges(captured, replayed, cache=cache)
    assert [v.edge for v in verdicts] == [
        "root→classify",
        "classify→lookup",
        "lookup→draft",
        "draft→qa_check",
    ]
    assert {v.status for v in verdicts} == {"unchanged"}
    assert replayed.edge_verdicts == verdicts
    lookup = replayed.span(captured.span("lookup").span_id)
    assert lookup is not None and not lookup.live  # a pure-Python tool keeps its recorded output
    assert routed.count() == 6  # three live re-sends, no judge call
    again = replay_trace(captured, cache=cache)
    assert routed.count() == 6 and all(r.cached for r in again.replayed_spans if r.live)


def test_prompt_override_propagates_downstream_and_labels_the_cause(routed: ModelServer, tmp_path) -> None:
    captured = run_pipeline("My order arrived broken")
    cache = ResponseCache(root=tmp_path / "c")
    replayed = replay_trace(captured, {"draft": {"prompt": "BE CONCISE."}}, cache=cache)
    draft = replayed.span(captured.span("draft").span_id)
    qa = replayed.span(captured.span("qa_check").span_id)
    assert draft.messages_sent[0] == {"role": "system", "content": "BE CONCISE."}
    assert draft.new_output != captured.span("draft").output
    # qa_check captured draft's old output verbatim in its request: the new one is substituted
    assert draft.new_output in qa.messages_sent[1]["content"]
    assert captured.span("draft").output not in qa.messages_sent[1]["content"]
    assert qa.inputs_changed and qa.inputs["reply"] == draft.new_output
    verdicts = _by_agent(attribute_edges(captured, replayed, cache=cache))
    assert verdicts["classify"].status == "unchanged"
    assert (verdicts["draft"].status, verdicts["draft"].tier, verdicts["draft"].change) == (
        "drifted",
        Tier.JUDGE,
        "direct edit",
    )
    assert verdicts["draft"].rationale == "judge: the outputs say the same thing"
    assert verdicts["qa_check"].change == "downstream"
    assert "--- old" in verdicts["draft"].unified


def test_explicit_override_suppresses_substitution(routed: ModelServer, tmp_path) -> None:
    captured = run_pipeline("Refund please")
    replayed = replay_trace(
        captured,
        {"draft": {"prompt": "NEW"}, "qa_check": {"prompt": "Check harder."}},
        cache=ResponseCache(root=tmp_path / "c"),
    )
    qa = replayed.span(captured.span("qa_check").span_id)
    assert captured.span("draft").output in qa.messages_sent[1]["content"]
    assert qa.messages_sent[0]["content"] == "Check harder."


def test_counterfactual_holds_other_agents_and_propagate_reexecutes_them(
    routed: ModelServer, tmp_path
) -> None:
    captured = run_pipeline("Where is my parcel?")
    cache = ResponseCache(root=tmp_path / "c")
    held = replay_trace(captured, {"draft": {"prompt": "NEW"}}, counterfactual=["draft"], cache=cache)
    qa_span = captured.span("qa_check")
    qa = held.span(qa_span.span_id)
    assert not qa.live and qa.inputs_changed and qa.new_output == qa_span.output
    verdicts = _by_agent(attribute_edges(captured, held, cache=cache))
    assert verdicts["qa_check"].status == "unchanged"  # held at its recorded output
    propagated = replay_trace(
        captured, {"draft": {"prompt": "NEW"}}, counterfactual="draft", propagate=True, cache=cache
    )
    qa = propagated.span(qa_span.span_id)
    assert qa.live and qa.new_output != qa_span.output


def test_hold_at_replays_only_that_span(routed: ModelServer, tmp_path) -> None:
    captured = run_pipeline("Cancel my order")
    target = captured.span("classify").span_id
    before = routed.count()
    replayed = replay_trace(captured, hold_at=[target], cache=ResponseCache(root=tmp_path / "c"))
    assert routed.count() == before + 1
    assert [r.live for r in replayed.replayed_spans] == [True, False, False, False]


def test_replay_span_model_override_and_kwargs(routed: ModelServer, tmp_path) -> None:
    captured = run_pipeline("Hi")
    span = captured.span("classify")
    provider = OpenAICompatibleProvider(base_url=routed.openai_url)
    replayed = replay_span(
        span,
        {"model": "gpt-4o", "temperature": 0.5, "seed": 3},
        provider=provider,
        cache=ResponseCache(enabled=False),
    )
    body = routed.requests[-1].body
    assert (body["model"], body["temperature"], body["seed"]) == ("gpt-4o", 0.5, 3)
    assert replayed.model == "gpt-4o" and replayed.latency_ms > 0 and not replayed.cached
    messages = [{"role": "user", "content": "only this"}]
    full = replay_span(span, {"messages": messages}, provider=provider, cache=ResponseCache(enabled=False))
    assert list(full.messages_sent) == messages


def test_numeric_swap_is_a_tier1_regression(routed: ModelServer, tmp_path) -> None:
    routed.reply_fn = lambda r: "Refund of $1,200 approved." if "Draft" in r.system else None
    captured = run_pipeline("Refund")
    routed.reply_fn = lambda r: "Refund of $12,000 approved." if "terse" in r.system else None
    replayed = replay_trace(
        captured, {"draft": {"prompt": "Be terse."}}, cache=ResponseCache(root=tmp_path / "c")
    )
    verdict = _by_agent(attribute_edges(captured, replayed))["draft"]
    assert (verdict.status, verdict.tier) == ("regressed", Tier.TIER1)
    assert verdict.rationale == "numbers changed: -$1200 +$12000"


def test_judge_worse_is_regressed(routed: ModelServer, tmp_path) -> None:
    captured = run_pipeline("Refund")
    routed.judge_verdict, routed.judge_rationale = "worse", "lost the refund policy"
    replayed = replay_trace(
        captured, {"draft": {"prompt": DRAFT_PROMPT + " Be rude."}}, cache=ResponseCache(root=tmp_path / "c")
    )
    verdict = _by_agent(attribute_edges(captured, replayed, cache=ResponseCache(root=tmp_path / "c")))[
        "draft"
    ]
    assert (verdict.status, verdict.rationale, verdict.confidence) == (
        "regressed",
        "judge: lost the refund policy",
        0.9,
    )


def test_unknown_model_raises_value_error(tmp_path) -> None:
    captured_span = _span(model="mystery-model", input_messages=[{"role": "user", "content": "x"}])
    with pytest.raises(ValueError, match="No provider registered for model 'mystery-model'"):
        replay_span(captured_span, cache=ResponseCache(enabled=False))


def _span(**fields):
    from proveai import Span

    base = dict(
        trace_id="a" * 32,
        span_id="b" * 16,
        parent_span_id=None,
        name="agent",
        operation="invoke_agent",
        kind="UNKNOWN",
        model=None,
        version=None,
        parent_agent=None,
        description=None,
        source_file=None,
        start_ns=1,
        end_ns=2,
        status="ok",
        error=None,
        inputs={},
        output="x",
    )
    base.update(fields)
    return Span(**base)


def test_noisy_model_rewording_drifts_but_never_regresses(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    with ModelServer(mode="noisy", seed=3) as noisy:
        monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "gpt-*,claude-*")
        monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", noisy.openai_url)
        reset_providers()
        captured = run_pipeline("My order arrived broken")
        # reinvoke=False: the pure-Python tool keeps its recorded output (its function is not called)
        replayed = replay_trace(captured, cache=ResponseCache(enabled=False), reinvoke=False)
        verdicts = attribute_edges(captured, replayed, cache=ResponseCache(enabled=False))
        classify_v2 = {"classify": {"prompt": "Name the ticket's category."}}
        reinvoked = replay_trace(captured, classify_v2, cache=ResponseCache(enabled=False))
    statuses = {v.child: v.status for v in verdicts}
    assert "regressed" not in statuses.values()
    # the pure-Python tool saw classify's reworded output and was not re-run
    lookup = next(v for v in verdicts if v.child == "lookup")
    assert (lookup.status, lookup.tier, lookup.change) == ("drifted", Tier.HELD, "downstream")
    assert "re-invoking captured functions is turned off" in lookup.rationale
    # by default its captured function is called again with the new category
    new_lookup = next(r for r in reinvoked.replayed_spans if r.agent == "lookup")
    new_category = next(r for r in reinvoked.replayed_spans if r.agent == "classify").new_output
    assert new_lookup.reinvoked and new_lookup.live and new_lookup.inputs == {"category": new_category}
    assert new_lookup.new_output == {"category_len": len(new_category), "orders": ["A-1", "A-2"]}
    assert "drifted" in statuses.values()  # the paraphrase went to the judge, which found it equivalent
    judged = [v for v in verdicts if v.tier == Tier.JUDGE]
    assert judged and all(v.rationale == "judge: the outputs say the same thing" for v in judged)


def test_an_unreachable_embedder_falls_back_to_the_judge(routed: ModelServer, tmp_path) -> None:
    from proveai.diff.grading import grade_outputs
    from proveai.providers.embedding import OpenAICompatibleEmbeddingAdapter

    dead = OpenAICompatibleEmbeddingAdapter(base_url="http://127.0.0.1:9/v1", model="e", max_retries=0)
    verdict = grade_outputs(
        "old words", "new words", embedder=dead, judge_model="gpt-judge", cache=ResponseCache(enabled=False)
    )
    assert (verdict.status, verdict.tier) == ("drifted", Tier.JUDGE)
