"""The on-disk store: OTLP JSON read by independent readers, index journal, corruption, outcomes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import jsonschema
import pytest

from proveai import FileExporter, iter_traces, load_trace, monitor, record_outcome, regex_match, trace
from proveai.errors import ProveAIError
from tests.proveai.script_kit import read_json, read_jsonl, trace_files

HEX32 = "^[0-9a-f]{32}$"
HEX16 = "^[0-9a-f]{16}$"
ANY_VALUE = {
    "type": "object",
    "minProperties": 1,
    "maxProperties": 1,
    "properties": {
        "stringValue": {"type": "string"},
        "boolValue": {"type": "boolean"},
        "intValue": {"type": "string", "pattern": "^-?[0-9]+$"},  # int64 as a JSON string
        "doubleValue": {"type": "number"},
        "arrayValue": {"type": "object"},
    },
    "additionalProperties": False,
}
KEY_VALUES = {
    "type": "array",
    "items": {
        "type": "object", "required": ["key", "value"],
        "properties": {"key": {"type": "string"}, "value": ANY_VALUE},
    },
}
OTLP_SCHEMA = {
    "type": "object",
    "required": ["resourceSpans"],
    "properties": {
        "resourceSpans": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object", "required": ["resource", "scopeSpans"],
                "properties": {
                    "resource": {
                        "type": "object", "required": ["attributes"], "properties": {"attributes": KEY_VALUES}
                    },
                    "scopeSpans": {
                        "type": "array",
                        "items": {
                            "type": "object", "required": ["scope", "spans"],
                            "properties": {
                                "scope": {"type": "object", "required": ["name"]},
                                "spans": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": [
                                            "traceId", "spanId", "name", "kind",
                                            "startTimeUnixNano", "endTimeUnixNano", "status", "attributes",
                                        ],
                                        "properties": {
                                            "traceId": {"type": "string", "pattern": HEX32},
                                            "spanId": {"type": "string", "pattern": HEX16},
                                            "parentSpanId": {"type": "string", "pattern": HEX16},
                                            "kind": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
                                            "startTimeUnixNano": {"type": "string", "pattern": "^[0-9]+$"},
                                            "endTimeUnixNano": {"type": "string", "pattern": "^[0-9]+$"},
                                            "status": {
                                                "type": "object",
                                                "properties": {
                                                    "code": {"enum": [0, 1, 2]}, "message": {"type": "string"}
                                                },
                                            },
                                            "attributes": KEY_VALUES,
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        }
    },
}


@monitor("plan", model="gpt-4o-mini", version="v7", kind="AGENT")
def plan(goal: str) -> dict:
    return {"steps": [lookup(goal), "answer"]}


@monitor("lookup", kind="TOOL", operation="execute_tool", parent_agent="plan")
def lookup(q: str) -> str:
    if q == "fail":
        raise LookupError("no such record")
    return f"found {q}"


def capture(root: Path, goal: str = "refund", checks=None):
    with trace("store-test", exporters=[FileExporter(root)], checks=checks or []) as t:
        try:
            plan(goal)
        except LookupError:
            pass
    return t


def test_otlp_json_matches_the_schema_shape_and_an_independent_reader(tmp_path):
    from opentelemetry.proto_json.trace.v1.trace import Status, TracesData

    t = capture(tmp_path)
    failed = capture(tmp_path, "fail")
    for captured in (t, failed):
        document = read_json(tmp_path / f"{captured.trace_id}.json")
        jsonschema.validate(document, OTLP_SCHEMA)
        data = TracesData.from_dict(document)  # opentelemetry-proto-json's OTLP/JSON mapping
        (resource_spans,) = data.resource_spans
        resource = {kv.key: kv.value for kv in resource_spans.resource.attributes}
        assert resource["service.name"].string_value == "store-test"
        spans = resource_spans.scope_spans[0].spans
        assert resource_spans.scope_spans[0].scope.name == "proveai"
        assert [s.trace_id.hex() for s in spans] == [captured.trace_id] * 2
        by_id = {s.span_id.hex(): s for s in spans}
        for ours in captured.spans:
            theirs = by_id[ours.span_id]
            assert (theirs.parent_span_id or b"").hex() == (ours.parent_span_id or "")
            assert (theirs.start_time_unix_nano, theirs.end_time_unix_nano) == (ours.start_ns, ours.end_ns)
            attrs = {kv.key: kv.value for kv in theirs.attributes}
            assert attrs["gen_ai.agent.name"].string_value == ours.name
            assert attrs["gen_ai.operation.name"].string_value == ours.operation
            assert json.loads(attrs["proveai.inputs"].string_value) == ours.inputs
            assert theirs.name == f"{ours.operation} {ours.name}"
            codes = Status.StatusCode
            expected = codes.STATUS_CODE_ERROR if ours.status == "error" else codes.STATUS_CODE_OK
            assert theirs.status.code == expected
    lookup_span = failed.span("lookup")
    assert lookup_span.status == "error" and lookup_span.error == "LookupError: no such record"
    assert failed.span("plan").status == "error"


def test_load_trace_round_trips_everything(tmp_path):
    t = capture(tmp_path, checks=[regex_match("lookup", "found")])
    loaded = load_trace(tmp_path / f"{t.trace_id}.json")
    assert loaded.trace_id == t.trace_id
    assert loaded.service_name == "store-test" and loaded.name == "store-test"
    assert loaded.spans == t.spans  # every field, attributes included
    assert loaded.invocation == t.invocation and loaded.invocation["argv"]
    assert loaded.check_results == t.check_results and loaded.outcome == "good"
    assert (loaded.started_ns, loaded.ended_ns) == (t.started_ns, t.ended_ns)
    assert [s.name for s in loaded.roots()] == ["plan"]
    assert loaded.children(loaded.span("plan")) == [loaded.span("lookup")]
    assert loaded.span("plan").version == "v7" and loaded.span("plan").model == "gpt-4o-mini"
    assert loaded.span("lookup").attributes["gen_ai.operation.name"] == "execute_tool"


def test_an_empty_trace_still_records_its_resource(tmp_path):
    with trace("nothing", exporters=[FileExporter(tmp_path)]) as t:
        pass
    loaded = load_trace(tmp_path / f"{t.trace_id}.json")
    assert loaded.trace_id == t.trace_id and loaded.spans == [] and loaded.name == "nothing"
    assert read_json(tmp_path / "manifest.json")[t.trace_id]["agents"] == []


def test_load_trace_errors_are_clear(tmp_path):
    with pytest.raises(ProveAIError, match="no trace file at"):
        load_trace(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ProveAIError, match=r"bad.json is not JSON"):
        load_trace(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(ProveAIError, match="not an OTLP JSON trace"):
        load_trace(tmp_path / "other.json")


def test_iter_traces_filters_and_manual_outcomes(tmp_path):
    good = capture(tmp_path, checks=[regex_match("lookup", "found")])
    bad = capture(tmp_path, checks=[regex_match("lookup", "nothing like this")])
    plain = capture(tmp_path)
    ids = lambda f: [t.trace_id for t in iter_traces(tmp_path, filter=f)]  # noqa: E731
    assert ids(None) == [good.trace_id, bad.trace_id, plain.trace_id]  # capture order
    assert ids({"outcome": "good"}) == [good.trace_id]
    assert ids({"outcome": "bad", "version": "v7", "agent": "lookup"}) == [bad.trace_id]
    assert ids({"outcome": "good", "version": "v8"}) == []
    assert ids({"agent": "nobody"}) == []
    assert ids({"detection": "suspect"}) == [plain.trace_id]
    assert ids({"since": "1h"}) == [good.trace_id, bad.trace_id, plain.trace_id]
    everything = [good.trace_id, bad.trace_id, plain.trace_id]
    assert ids(lambda t: t.span("lookup").output == "found refund") == everything
    record_outcome(bad.trace_id, label="good", reason="user thumbs-up", root=tmp_path)
    assert ids({"outcome": "good"}) == [good.trace_id, bad.trace_id]
    assert [t.outcome for t in iter_traces(tmp_path, filter={"outcome": "good"})] == ["good", "good"]
    with pytest.raises(ValueError, match="unknown filter key 'status'; valid keys: outcome, version, agent"):
        iter_traces(tmp_path, filter={"status": "good"})
    with pytest.raises(ValueError, match="outcome must be one of good, bad, skip"):
        iter_traces(tmp_path, filter={"outcome": "great"})


def test_record_outcome_validates_and_appends(tmp_path):
    t = capture(tmp_path)
    before = (tmp_path / "outcomes.jsonl").read_bytes()
    with pytest.raises(ValueError, match="label must be one of good, bad, skip"):
        record_outcome(t.trace_id, label="fine", root=tmp_path)
    with pytest.raises(ValueError, match="is not a trace id"):
        record_outcome("abc", label="good", root=tmp_path)
    with pytest.raises(ValueError, match=f"no trace {'0' * 32} in"):
        record_outcome("0" * 32, label="good", root=tmp_path)
    assert (tmp_path / "outcomes.jsonl").read_bytes() == before  # nothing written on bad input
    record_outcome(t.trace_id, label="bad", score=0.1, root=tmp_path)
    rows = read_jsonl(tmp_path / "outcomes.jsonl")
    assert rows[-1]["source"] == "manual" and rows[-1]["label"] == "bad" and rows[-1]["score"] == 0.1


def test_detection_json_follows_the_status_mapping(tmp_path):
    flagged = capture(tmp_path, checks=[regex_match("lookup", "zzz")])
    clean = capture(tmp_path, checks=[regex_match("lookup", "found")])
    suspect = capture(tmp_path)
    got = {
        t.trace_id: read_json(tmp_path / f"{t.trace_id}.detection.json") for t in (flagged, clean, suspect)
    }
    assert got[flagged.trace_id]["status"] == "flagged"
    assert got[flagged.trace_id]["fired"] == [
        {
            "name": "regex_match", "agent": "lookup", "label": "bad",
            "reason": "lookup output does not match /zzz/",
        }
    ]
    assert got[clean.trace_id]["status"] == "clean" and got[clean.trace_id]["fired"] == []
    assert got[suspect.trace_id]["status"] == "suspect" and got[suspect.trace_id]["checks_run"] == 0
    from proveai.narrative.mast import narrate_cohort, render

    assert "flagged" in render(got[flagged.trace_id]) and "does not match" in render(got[flagged.trace_id])
    assert narrate_cohort(got.values()).startswith("3 trace(s): 1 flagged, 1 suspect, 1 clean.")


def test_manifest_is_journaled_and_compacted_and_readable_with_json_load(tmp_path):
    from proveai.traces.index import JOURNAL, read_index

    traces = [capture(tmp_path) for _ in range(12)]
    ids = [t.trace_id for t in traces]
    journal_lines = read_jsonl(tmp_path / JOURNAL)
    on_disk = read_json(tmp_path / "manifest.json")
    # every capture is in the manifest or still in the journal, nowhere twice lost
    assert set(on_disk) | {row["trace_id"] for row in journal_lines} == set(ids)
    assert len(on_disk) >= 1
    index = read_index(tmp_path)  # a read folds the journal in
    assert list(index.entries) == ids and index.warnings == []
    assert list(read_json(tmp_path / "manifest.json")) == ids
    assert (tmp_path / JOURNAL).read_bytes() == b""


def test_a_corrupt_manifest_is_reported_and_rebuilt_never_emptied(tmp_path, proveai_cli):
    from proveai.traces.index import read_index

    traces = [capture(tmp_path) for _ in range(3)]
    read_index(tmp_path)
    (tmp_path / "manifest.json").write_text('{"' + traces[0].trace_id + '": {"agents": [')  # torn
    result = proveai_cli("status", "--traces", str(tmp_path))
    assert result.returncode == 0, result.stderr
    warning_lines = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warning_lines) == 1 and "manifest.json is corrupt" in warning_lines[0]
    assert "rebuilding the index from the trace files" in warning_lines[0]
    for t in traces:
        assert t.trace_id in result.stdout
    assert set(read_json(tmp_path / "manifest.json")) == {t.trace_id for t in traces}
    kept = list(tmp_path.glob("manifest.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text().startswith('{"')
    again = proveai_cli("status", "--traces", str(tmp_path))
    assert again.returncode == 0 and again.stderr == ""


def test_a_corrupt_journal_line_is_reported_and_the_trace_kept(tmp_path):
    from proveai.traces.index import JOURNAL, read_index

    first = capture(tmp_path)
    read_index(tmp_path)
    second = capture(tmp_path)
    with open(tmp_path / JOURNAL, "ab") as handle:
        handle.write(b'{"trace_id": "torn')  # a writer killed mid-line
    index = read_index(tmp_path)
    assert set(index.entries) == {first.trace_id, second.trace_id}
    assert len(index.warnings) == 1 and "manifest.journal.jsonl line" in index.warnings[0]


def test_nothing_is_written_outside_the_store_root(tmp_path):
    root = tmp_path / "store"
    outside_before = set(tmp_path.iterdir())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for _ in range(3):
            capture(root, checks=[regex_match("lookup", "found")])
        list(iter_traces(root))
    finally:
        os.chdir(cwd)
    assert set(tmp_path.iterdir()) - outside_before == {root}
    names = {p.name for p in root.iterdir()}
    assert not any(name.endswith(".tmp") for name in names)


def test_an_exporter_failure_is_recorded_and_warned_not_raised(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.warns(RuntimeWarning, match="exporter FileExporter failed"), trace(
        exporters=[FileExporter(blocker / "sub")]
    ) as t:
        plan("x")
    assert t.export_errors and "FileExporter" in t.export_errors[0]


def test_global_exporters_fire_after_the_trace_own(tmp_path):
    from proveai import add_exporter
    from proveai.capture.exporters import remove_exporter

    order: list[str] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def export(self, t) -> None:
            order.append(self.name)

    global_one = Recorder("global")
    add_exporter(global_one)
    try:
        with trace(exporters=[Recorder("own1"), Recorder("own2")]):
            pass
    finally:
        remove_exporter(global_one)
    assert order == ["own1", "own2", "global"]
    with pytest.raises(TypeError, match="export"):
        add_exporter(object())


def test_spans_reach_a_configured_opentelemetry_tracer_provider(tmp_path, py):
    py.write(
        "otel.py",
        """
        from opentelemetry import trace as otel
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from proveai import monitor, trace

        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        otel.set_tracer_provider(provider)

        @monitor("inner", model="gpt-4o-mini")
        def inner(x):
            return x

        @monitor("outer")
        def outer(x):
            return inner(x)

        with trace("otel-svc") as t:
            outer("hi")
        got = memory.get_finished_spans()
        by = {s.attributes["gen_ai.agent.name"]: s for s in got}
        assert len(got) == 2, got
        assert format(by["outer"].context.trace_id, "032x") == t.trace_id
        assert format(by["inner"].parent.span_id, "016x") == t.span("outer").span_id
        assert by["inner"].attributes["gen_ai.request.model"] == "gpt-4o-mini"
        assert by["inner"].resource.attributes["service.name"] == "otel-svc"
        print("ok")
        """,
    )
    assert py.ok("otel.py").stdout.strip() == "ok"


def test_thirty_processes_capturing_at_once_all_end_up_indexed(py, workdir):
    from proveai.traces.index import read_index

    py.write(
        "worker.py",
        """
        import sys, time
        from proveai import FileExporter, monitor, regex_match, trace

        @monitor("step")
        def step(i):
            return f"item {i}"

        go = float(sys.argv[2])
        while time.time() < go:  # start together
            time.sleep(0.002)
        for n in range(int(sys.argv[1])):
            with trace("w", exporters=[FileExporter("store")], checks=[regex_match("step", "item")]) as t:
                step(n)
            print(t.trace_id)
        """,
    )
    import subprocess
    import sys

    from tests.conftest import isolated_env

    go = time.time() + 2.5
    procs = [
        subprocess.Popen(
            [sys.executable, "worker.py", "3", str(go)], cwd=workdir, env=isolated_env(py.home),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(30)
    ]
    printed: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        printed += out.split()
    assert len(printed) == 90 and len(set(printed)) == 90
    store = workdir / "store"
    assert sorted(p.stem for p in trace_files(store)) == sorted(printed)
    composite = [r for r in read_jsonl(store / "outcomes.jsonl") if r["source"] == "composite"]
    assert sorted(r["trace_id"] for r in composite) == sorted(printed)
    index = read_index(store)
    assert sorted(index.entries) == sorted(printed) and index.warnings == []
    assert sorted(read_json(store / "manifest.json")) == sorted(printed)


def test_reading_a_folder_that_is_not_a_store_writes_nothing(tmp_path, proveai_cli):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    result = proveai_cli("status", "--traces", str(folder))
    assert result.returncode == 0 and result.stdout == f"no traces yet in {folder}\n"
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_a_deleted_manifest_is_rebuilt_with_a_warning(tmp_path):
    from proveai.traces.index import JOURNAL, read_index

    traces = [capture(tmp_path) for _ in range(2)]
    read_index(tmp_path)
    (tmp_path / "manifest.json").unlink()
    (tmp_path / JOURNAL).unlink()
    index = read_index(tmp_path)
    assert set(index.entries) == {t.trace_id for t in traces}
    missing = f"{tmp_path / 'manifest.json'} is missing; rebuilding the index from the trace files"
    assert index.warnings == [missing]
    assert set(read_json(tmp_path / "manifest.json")) == {t.trace_id for t in traces}


def test_a_capture_into_a_large_store_does_not_rewrite_the_index(tmp_path):
    from proveai.traces.index import JOURNAL, read_index

    seed = capture(tmp_path)
    read_index(tmp_path)
    entry = read_json(tmp_path / "manifest.json")[seed.trace_id]
    # a store indexing 3,000 traces (entries only: the index is what a capture could rewrite)
    big = {f"{i:032x}": entry for i in range(3000)} | {seed.trace_id: entry}
    (tmp_path / "manifest.json").write_text(json.dumps(big))
    before = (tmp_path / "manifest.json").stat()
    added = [capture(tmp_path).trace_id for _ in range(20)]
    after = (tmp_path / "manifest.json").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # untouched
    assert [row["trace_id"] for row in read_jsonl(tmp_path / JOURNAL)] == added
    assert list(read_index(tmp_path).entries)[-20:] == added  # and a read folds them in
