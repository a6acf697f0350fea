"""The readme's replay, diff, provider and report snippets, executed as written.

Each snippet is the readme's text, read from docs/proveai-replay.md (so a change there reaches
these tests); only what the readme leaves to the reader is supplied
around it: a captured trace in ./traces, `span` (one of its spans), a prompt file, and the
gpt-*/claude-* models routed to the fake server on 127.0.0.1 (as a user's .env would).
"""

from __future__ import annotations

import gc
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from proveai.providers import reset_providers
from tests.docs.snippets import snippet
from tests.proveai.model_server import ModelServer
from tests.proveai.replay.pipeline import run_pipeline

PAGE = "proveai-replay.md"
READING = snippet(PAGE, "reading")
REPLAY_SPAN = snippet(PAGE, "replay-span")
REPLAY_TRACE = snippet(PAGE, "replay-trace")
DIFF = snippet(PAGE, "diff")
PROVIDERS = snippet(PAGE, "providers")
REPORT = snippet(PAGE, "report")


@pytest.fixture
def project(model_server: ModelServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """A folder with a captured trace in ./traces and a prompt file, models routed locally."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "gpt-*,claude-*")
    monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", model_server.openai_url)
    reset_providers()
    captured = run_pipeline("My order arrived broken", root=tmp_path / "traces")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "qa_check_v2.md").write_text("Check the reply. Be strict.\n")
    return {"trace_id": captured.trace_id, "captured": captured}


def test_reading_and_replay_snippets_run_as_written(
    project: dict[str, Any], model_server: ModelServer
) -> None:
    names: dict[str, Any] = {"trace_id": project["trace_id"]}
    exec(READING, names)
    trace = names["trace"]
    assert trace.trace_id == project["trace_id"]  # the loop found no good trace: load_trace's stays
    names["span"] = trace.span("draft")
    exec(REPLAY_SPAN, names)
    one = names["replayed"]
    assert one.model == "gpt-4o" and one.latency_ms >= 0 and isinstance(one.new_output, str)
    sent = model_server.chat_requests()[-1].body["messages"]
    assert sent[0] == {"role": "system", "content": "BE CONCISE."}
    with warnings.catch_warnings():  # the snippet's open(...).read() leaves its file to the GC
        warnings.simplefilter("ignore", ResourceWarning)
        exec(REPLAY_TRACE, names)
        gc.collect()
    replayed = names["replayed"]
    assert replayed.edge_verdicts == []
    by_name = {r.agent: r for r in replayed.replayed_spans}
    assert by_name["draft"].model == "claude-haiku-4-5"
    assert by_name["qa_check"].messages_sent[0]["content"] == "Check the reply. Be strict.\n"


def test_diff_snippets_run_as_written(project: dict[str, Any], model_server: ModelServer) -> None:
    trace = project["captured"]
    from proveai import replay_trace

    names: dict[str, Any] = {
        "trace": trace,
        "replayed": replay_trace(trace, overrides_by_agent={"qa_check": {"prompt": "Be strict."}}),
        "input_messages": [{"role": "user", "content": "Summarise the ticket"}],
        "old_output": "The parcel ships Monday.",
        "new_output": "It leaves on Monday.",
    }
    exec(DIFF, names)
    assert names["money"]["equal"] is False and names["money"]["kind"] == "numeric"
    assert 0.0 <= names["similarity"] <= 1.0 and names["a"].model == "all-MiniLM-L6-v2"
    assert names["judged"] == {
        "verdict": "equivalent", "confidence": 0.9, "rationale": "the outputs say the same thing",
    }
    verdicts = names["verdicts"]
    edges = ["root→classify", "classify→lookup", "lookup→draft", "draft→qa_check"]
    assert [v.edge for v in verdicts] == edges
    assert names["replayed"].edge_verdicts == verdicts
    assert verdicts[-1].change == "direct edit" and not any(v.inconclusive for v in verdicts)


def test_provider_and_report_snippets_run_as_written(
    project: dict[str, Any], model_server: ModelServer
) -> None:
    names: dict[str, Any] = {
        "server_url": model_server.openai_url,
        "messages": [{"role": "user", "content": "hi"}],
    }
    exec(PROVIDERS, names)
    assert names["reply"].text and names["provider"].base_url == model_server.openai_url
    from proveai import attribute_edges, replay_trace

    trace = project["captured"]
    replayed = replay_trace(trace)
    attribute_edges(trace, replayed)
    names = {"pairs": [(trace, replayed)]}
    exec(REPORT, names)
    html = Path("report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "claude-haiku-4-5" in html and "<svg" in html
    assert json.dumps(trace.trace_id)[1:-1] in html
