"""snapshot/stored_traces.py: stored traces found through the capture index (its journal folded in,
an unlisted file dated by its mtime), a trace id given by a unique prefix, and an agent's spans
read as pinned definitions and expected I/O, on traces captured for real into a store."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from proveai import Trace
from proveai.errors import ProveAIError
from proveai.snapshot.stored_traces import (
    agent_spans,
    capture_of,
    check_agents,
    dated_trace_files,
    definition_from_spans,
    definitions_of,
    expected_from_span,
    find_trace_path,
    load_trace_file,
    tool_calls_of,
    varying_agents,
)
from proveai.store import Store
from proveai.store.traces.index import JOURNAL, read_index
from proveai.traces.trace import Span
from tests.proveai.snapshot.store_kit import capture


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def manifest(traces_dir: Path) -> dict[str, dict]:
    read_index(traces_dir)  # folds the journal into manifest.json
    return json.loads((traces_dir / "manifest.json").read_text(encoding="utf-8"))


def write_manifest(traces_dir: Path, entries: dict[str, dict]) -> None:
    (traces_dir / "manifest.json").write_text(json.dumps(entries), encoding="utf-8")
    (traces_dir / JOURNAL).write_text("", encoding="utf-8")


def test_no_store_is_no_traces_and_a_refusal_that_says_how_to_capture(store: Store) -> None:
    assert dated_trace_files(store.traces_dir) == []
    with pytest.raises(ProveAIError) as caught:
        find_trace_path(store.traces_dir, None)
    assert caught.value.message == f"no traces in {store.traces_dir}"
    assert "FileExporter()" in caught.value.suggestions[0]


def test_traces_are_dated_by_their_index_entry_oldest_first(store: Store) -> None:
    first, second, third = (capture(store, f"ticket {n}") for n in range(3))
    folder = store.traces_dir
    dated = dated_trace_files(folder)
    assert [tid for tid, _, _ in dated] == [first.trace_id, second.trace_id, third.trace_id]
    assert [path for _, path, _ in dated] == [folder / f"{t.trace_id}.json" for t in (first, second, third)]
    assert [when for _, _, when in dated] == [t.started_ns / 1e9 for t in (first, second, third)]
    assert find_trace_path(folder, None) == folder / f"{third.trace_id}.json"

    # an entry without started_ns is dated by its timestamp; one the index does not list, by its file
    entries = manifest(folder)
    entries[third.trace_id] = {k: v for k, v in entries[third.trace_id].items() if k != "started_ns"}
    entries[third.trace_id]["timestamp"] = "2001-01-01T00:00:00Z"
    del entries[first.trace_id]
    write_manifest(folder, entries)
    os.utime(folder / f"{first.trace_id}.json", (1_500_000_000, 1_500_000_000))
    dated = dated_trace_files(folder)
    assert [(tid, when) for tid, _, when in dated] == [
        (third.trace_id, 978307200.0),  # 2001-01-01 UTC
        (first.trace_id, 1_500_000_000.0),  # 2017, its file's mtime
        (second.trace_id, second.started_ns / 1e9),
    ]


def test_the_newest_trace_may_be_listed_only_in_the_journal(store: Store) -> None:
    # the index compacts its journal lazily: the newest capture may not be in manifest.json
    # yet, and its file may look older than the others (a copy, a checkout)
    older, newest = capture(store, "one"), capture(store, "two")
    folder = store.traces_dir
    entries = manifest(folder)
    entry = entries.pop(newest.trace_id)
    (folder / "manifest.json").write_text(json.dumps(entries), encoding="utf-8")
    (folder / JOURNAL).write_text(json.dumps({"trace_id": newest.trace_id, "entry": entry}) + "\n", "utf-8")
    past = (folder / f"{older.trace_id}.json").stat().st_mtime - 60
    os.utime(folder / f"{newest.trace_id}.json", (past, past))
    assert [tid for tid, _, _ in dated_trace_files(folder)] == [older.trace_id, newest.trace_id]
    assert find_trace_path(folder, None).name == f"{newest.trace_id}.json"


def test_a_trace_id_is_found_by_a_unique_prefix(store: Store) -> None:
    # captures until two trace ids share their first character (at most 17 of 16 hex digits)
    by_first: dict[str, list[str]] = {}
    while not any(len(ids) > 1 for ids in by_first.values()):
        trace_id = capture(store).trace_id
        by_first.setdefault(trace_id[0], []).append(trace_id)
    shared, (one, other) = next((c, ids[:2]) for c, ids in by_first.items() if len(ids) > 1)
    folder = store.traces_dir
    assert find_trace_path(folder, one) == folder / f"{one}.json"
    assert find_trace_path(folder, one[:12].upper() + "…") == folder / f"{one}.json"  # as status prints it
    assert find_trace_path(folder, other[:12] + "...") == folder / f"{other}.json"
    with pytest.raises(ProveAIError) as ambiguous:
        find_trace_path(folder, shared)
    assert ambiguous.value.message.startswith(f"trace id prefix {shared!r} matches ")
    assert list(ambiguous.value.suggestions) == ["give more characters of the trace id"]
    missing = "z" * 8  # no hex id starts with z
    with pytest.raises(ProveAIError) as unknown:
        find_trace_path(folder, missing)
    assert unknown.value.message == f"no trace {missing!r} in {folder}"
    assert list(unknown.value.suggestions) == ["proveai status  (lists stored traces)"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "is not an OTLP JSON trace (no resourceSpans)"),
        ('{"resourceSpans": 3}', "is not a well-formed OTLP JSON trace"),
        (None, "no trace file at"),
    ],
)
def test_a_file_that_is_not_a_trace_is_an_error_naming_it(
    tmp_path: Path, text: str | None, problem: str
) -> None:
    path = tmp_path / ("ab" * 16 + ".json")
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ProveAIError) as caught:
        load_trace_file(path)
    assert str(path) in caught.value.message and problem in caught.value.message


def test_an_agents_calls_are_its_spans_in_order_with_their_tools(store: Store) -> None:
    captured = capture(store, qa_loops=2)
    read = load_trace_file(store.traces_dir / f"{captured.trace_id}.json")
    calls = agent_spans(read)
    assert list(calls) == ["classify", "draft", "policy", "qa_check"]
    assert [s.span_id for s in calls["qa_check"]] == [s.span_id for s in captured.spans_named("qa_check")]
    assert calls["qa_check"][0].start_ns < calls["qa_check"][1].start_ns
    (draft,) = calls["draft"]
    assert tool_calls_of(read, draft) == ({"name": "policy", "inputs": {"category": "refund"}},)
    assert tool_calls_of(read, calls["classify"][0]) == ()
    expected = expected_from_span(read, draft)
    assert expected.inputs == {"category": "refund"}
    assert expected.output == "A polite reply about refund, within 30 days."
    assert expected.tool_calls == ({"name": "policy", "inputs": {"category": "refund"}},)
    assert (expected.status, expected.error, expected.request) == ("ok", None, None)


def test_tool_calls_in_the_model_reply_are_the_calls_tools(store: Store) -> None:
    captured = capture(store)
    asked = {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{}"}}
    reply = [{"role": "assistant", "content": "", "tool_calls": [asked]}]
    classify = replace(captured.span("classify"), output_messages=reply)
    built = Trace.closed(
        trace_id=captured.trace_id, name="support", service_name="support", spans=[classify], invocation=None
    )
    assert tool_calls_of(built, classify) == (asked,)


def test_a_definition_is_the_first_calls_model_prompt_and_settings(store: Store) -> None:
    captured = capture(store)
    definitions = definitions_of(captured)
    assert list(definitions) == ["classify", "draft", "policy", "qa_check"]
    draft = definitions["draft"]
    assert (draft.name, draft.kind, draft.model, draft.parent_agent) == ("draft", "UNKNOWN", "m", "classify")
    assert draft.function == "tests.proveai.snapshot.store_kit:draft"
    assert draft.source_file == "tests/proveai/snapshot/store_kit.py"
    assert draft.code_hash and draft.code_hash.startswith("sha256:")
    assert (draft.prompt, draft.settings) == (None, None)  # no model call through proveai
    assert definitions["policy"].kind == "TOOL"
    assert list(definitions_of(captured, ["draft"])) == ["draft"]


def test_pinned_settings_leave_the_seed_out() -> None:
    def span(seed: int) -> Span:
        return Span(
            trace_id="t" * 32,
            span_id="s" * 16,
            parent_span_id=None,
            name="a",
            operation="invoke_agent",
            kind="LLM",
            model=None,
            version=None,
            parent_agent="root",
            description=None,
            source_file="p.py",
            start_ns=1,
            end_ns=2,
            status="ok",
            error=None,
            inputs={},
            output="x",
            input_messages=[{"role": "system", "content": "P"}],
            request={"model": "m", "temperature": 0.2, "seed": seed},
        )

    first, second = definition_from_spans("a", [span(1)]), definition_from_spans("a", [span(2)])
    assert first.settings == {"temperature": 0.2} and first.prompt == "P"
    assert first.model == "m"  # the model the request named, when the span declares none
    assert first.settings_hash == second.settings_hash and first == second


def test_a_capture_holds_each_chosen_agents_expected_io(store: Store) -> None:
    captured = capture(store, qa_loops=2)
    whole = capture_of(captured)
    assert whole.trace_id == captured.trace_id
    assert {name: len(calls) for name, calls in whole.io.items()} == {
        "classify": 1, "draft": 1, "policy": 1, "qa_check": 2,
    }
    assert whole.io["classify"][0].output == "refund"
    chosen = capture_of(captured, ["qa_check", "classify"])
    assert list(chosen.io) == ["classify", "qa_check"]  # the trace's order, not the request's


def test_an_unknown_agent_is_refused_with_the_known_ones(store: Store) -> None:
    captured = capture(store)
    check_agents(captured, ["draft", "policy"])
    with pytest.raises(ProveAIError) as caught:
        check_agents(captured, ["draft", "drafter"])
    assert caught.value.message == (
        f"unknown agent 'drafter' in trace {captured.trace_id[:12]}… (did you mean \"draft\"?)"
    )
    assert list(caught.value.suggestions) == ["known agents: classify, draft, policy, qa_check"]


def test_an_agent_varies_when_the_same_input_gave_another_output(store: Store) -> None:
    polite, again, curt = capture(store), capture(store), capture(store, tone="curt")
    assert varying_agents([polite, again]) == ()
    # draft read the same category and wrote another reply; qa_check then read another reply,
    # which is another input, not variation
    assert varying_agents([polite, again, curt]) == ("draft",)
    assert varying_agents([curt]) == ()
