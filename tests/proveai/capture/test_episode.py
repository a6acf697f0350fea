"""@monitor inside a sweep episode: one span per agent call in the episode's spans, nested by
its real parents, in the episode's one trace; a trace's checks label them; content only when
[capture] content = true, every value bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from poisson_prove.episode import capture, recording
from poisson_prove.episode.row import spans_json
from proveai import assert_json, monitor, trace
from proveai.capture.episode import content_hash
from proveai.capture.trace import current_trace


@monitor("classify", model="gpt-4o-mini", kind="CHAT_MODEL", version="v3")
def classify(ticket: str) -> str:
    with recording.step("lookup"):
        return "billing"


@monitor("draft", parent_agent="classify")
def draft(category: str) -> str:
    return classify(category) + " reply " + "x" * 200


@monitor("broken", kind="TOOL")
def broken() -> None:
    raise RuntimeError("tool down")


@monitor("async_agent")
async def async_agent(text: str) -> str:
    return text.upper()


@pytest.fixture
def episode() -> Iterator[recording.EpisodeSpans]:
    spans, token = recording.begin_episode()
    try:
        yield spans
    finally:
        recording.end_episode(token)
        capture.enable_capture({})  # back to no limit and no content


def stored(spans: list) -> list[dict]:
    return json.loads(spans_json(spans))  # read back as the row stores them


def test_agent_calls_are_spans_of_the_episode_nested_by_their_real_parents(episode) -> None:
    with recording.step("turn"):
        draft("my order")
    with pytest.raises(RuntimeError):
        broken()
    assert current_trace() is None  # the episode's frame is not a trace
    rows = stored(episode)
    assert [(r["source"], r["name"], r["parent"]) for r in rows] == [
        ("step", "turn", None),
        ("monitor", "draft", 0),
        ("monitor", "classify", 1),
        ("step", "lookup", 2),  # a step inside an agent call is that call's child
        ("monitor", "broken", None),
    ]
    assert len({r["trace_id"] for r in rows}) == 1 and len({r["span_id"] for r in rows}) == 5
    classify_attrs = rows[2]["attributes"]
    assert classify_attrs["gen_ai.agent.name"] == "classify"
    assert classify_attrs["proveai.kind"] == "CHAT_MODEL"
    assert classify_attrs["gen_ai.request.model"] == "gpt-4o-mini"
    assert classify_attrs["proveai.version"] == "v3"
    assert classify_attrs["proveai.output_hash"] == content_hash("billing")
    assert classify_attrs["proveai.model_hash"] == content_hash("gpt-4o-mini")
    assert classify_attrs["proveai.code_hash"].startswith("sha256:")
    assert rows[1]["attributes"]["proveai.parent_agent"] == "classify"
    assert "proveai.output" not in classify_attrs and "proveai.inputs" not in classify_attrs  # content off
    assert rows[4]["status"] == "error" and rows[4]["error"] == "RuntimeError: tool down"
    assert "proveai.output_hash" not in rows[4]["attributes"]
    assert all(r["end"] >= r["start"] for r in rows)


def test_the_next_episode_is_a_new_trace(episode) -> None:
    classify("a")
    first = episode.trace_id
    episode.clear()  # what the row does once it has taken the spans
    classify("b")
    assert stored(episode)[0]["trace_id"] != first


def test_a_trace_opened_in_the_episode_records_there_too_and_labels_its_calls(episode) -> None:
    def replied(closed) -> str:
        return "good"

    replied.name = "replied"  # type: ignore[attr-defined]
    with trace("triage", checks=[assert_json("classify"), replied]) as t:
        draft("x")
    rows = stored(episode)
    assert [r["name"] for r in rows if r["source"] == "monitor"] == ["draft", "classify"]
    assert [s.name for s in t.spans] == ["draft", "classify"]  # the trace has them as before
    classify_attrs = next(r for r in rows if r["name"] == "classify")["attributes"]
    assert classify_attrs["proveai.trace.id"] == t.trace_id
    assert classify_attrs["proveai.check.json_valid"] == "bad"  # "billing" is not JSON
    assert classify_attrs["proveai.check.replied"] == "good"  # a check naming no agent labels all
    draft_attrs = next(r for r in rows if r["name"] == "draft")["attributes"]
    assert "proveai.check.json_valid" not in draft_attrs


def test_content_only_when_asked_and_every_value_bounded(episode) -> None:
    capture.enable_capture({"content": True, "max_observation_bytes": 40})
    draft("a ticket")
    attrs = stored(episode)[0]["attributes"]
    assert json.loads(attrs["proveai.inputs"]) == {"category": "a ticket"}
    assert attrs["proveai.output"].startswith('"billing reply xxx') and attrs["proveai.output"].endswith("…")
    assert all(len(str(v).encode()) <= 40 for v in attrs.values())


def test_async_agents_are_recorded(episode) -> None:
    import asyncio  # this test's own event loop

    assert asyncio.run(async_agent("hi")) == "HI"
    (row,) = stored(episode)
    assert row["name"] == "async_agent" and row["attributes"]["proveai.output_hash"] == content_hash("HI")


def test_outside_an_episode_nothing_is_recorded_and_poisson_prove_never_imports_proveai() -> None:
    assert recording.current_spans() is None
    assert draft("plain").startswith("billing reply")
    code = (
        "import sys, poisson_prove.episode.run, poisson_prove.episode.capture\n"
        "print(sorted(m for m in sys.modules if m.startswith('proveai')))"
    )
    command = [sys.executable, "-c", code]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
