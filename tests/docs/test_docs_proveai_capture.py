"""The capture snippets of the SDK readme, run as written (with a stand-in llm and crm).

The code is read from docs/proveai-capture.md, so a change there reaches these tests."""

from __future__ import annotations

import json

from tests.docs.snippets import snippet
from tests.proveai.script_kit import STAND_INS, read_json, read_jsonl, trace_files

PAGE = "proveai-capture.md"
QUICK_START = STAND_INS + snippet(PAGE, "quick-start")
CAPTURE = STAND_INS + snippet(PAGE, "capture")
SURFACE = STAND_INS + snippet(PAGE, "surface")


def test_quick_start_writes_otlp_manifest_and_outcomes(py, workdir):
    py.write("pipeline.py", QUICK_START)
    result = py.ok("pipeline.py")
    trace_id = result.stdout.strip()
    root = workdir / "proveai" / "traces"
    assert [p.name for p in trace_files(root)] == [f"{trace_id}.json"]
    manifest = read_json(root / "manifest.json")
    assert manifest[trace_id]["agents"] == ["classify", "draft", "qa_check"]
    assert set(manifest[trace_id]) >= {"version", "agents", "timestamp", "name", "invocation"}
    assert (root / "outcomes.jsonl").exists()  # no checks: no rows, but the log exists
    assert read_jsonl(root / "outcomes.jsonl") == []
    detection = read_json(root / f"{trace_id}.detection.json")
    assert detection["status"] == "suspect" and detection["outcome"] is None

    document = read_json(root / f"{trace_id}.json")
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    by_agent = {}
    for span in spans:
        attrs = {a["key"]: a["value"] for a in span["attributes"]}
        by_agent[attrs["gen_ai.agent.name"]["stringValue"]] = (span, attrs)
    # the agents are called one after another at top level: three roots, each declaring its edge
    assert all("parentSpanId" not in s or not s["parentSpanId"] for s, _ in by_agent.values())
    assert by_agent["draft"][1]["proveai.parent_agent"]["stringValue"] == "classify"
    assert by_agent["qa_check"][1]["gen_ai.request.model"]["stringValue"] == "claude-haiku-4-5"
    assert json.loads(by_agent["classify"][1]["proveai.inputs"]["stringValue"]) == {
        "ticket": "My order arrived broken"
    }


def test_capture_quick_start_runs_checks_and_labels_the_trace(py, workdir):
    py.write("pipeline.py", CAPTURE)
    result = py.ok("pipeline.py")
    lines = result.stdout.splitlines()
    trace_id, outcome = lines[0], lines[1]
    labels = {line.split()[0]: line.split()[1] for line in lines[2:]}
    assert labels["json_valid"] == "good"
    assert labels["tool_called"] == "good"
    assert labels["regex_match"] == "good"
    assert labels["llm_judge"] == "skip"  # no judge key offline: skip with a reason, never a crash
    assert "judge skip" in next(line for line in lines if line.startswith("llm_judge"))
    assert outcome == "good"

    root = workdir / "traces"
    assert {p.name for p in root.iterdir() if not p.name.startswith(".")} == {
        f"{trace_id}.json", f"{trace_id}.detection.json", "manifest.json", "outcomes.jsonl",
        "manifest.journal.jsonl",
    }
    rows = read_jsonl(root / "outcomes.jsonl")
    assert [(r["check_name"], r["source"]) for r in rows] == [
        ("json_valid", "check"), ("tool_called", "check"), ("regex_match", "check"),
        ("llm_judge", "check"), ("composite", "composite"),
    ]
    assert rows[-1]["label"] == "good"
    assert all(set(r) >= {"trace_id", "check_name", "label", "score", "source"} for r in rows)
    assert read_json(root / f"{trace_id}.detection.json")["status"] == "clean"
    entry = read_json(root / "manifest.json")[trace_id]
    assert entry["version"] == "v3" and entry["name"] == "ticket-triage"
    assert entry["agents"] == ["classify", "crm_lookup", "draft", "qa_check"]


def test_capture_surface_snippets_run_as_written(py, workdir):
    py.write("surface.py", SURFACE)
    result = py.ok("surface.py")
    trace_id = result.stdout.splitlines()[-1].split()[1]
    assert f"good {trace_id}" in result.stdout  # the manual outcome made it good
    assert "retriever 0" in result.stdout
    rows = read_jsonl(workdir / "proveai" / "traces" / "outcomes.jsonl")
    manual = [r for r in rows if r["source"] == "manual"]
    assert manual == [
        {
            "trace_id": trace_id, "check_name": "manual", "label": "good", "score": 0.95,
            "source": "manual", "timestamp": manual[0]["timestamp"], "reason": "thumbs-up from user",
        }
    ]


def test_honours_proveai_traces_dir(py, workdir):
    py.write("pipeline.py", QUICK_START)
    target = workdir / "elsewhere" / "store"
    result = py.ok("pipeline.py", env={"PROVEAI_TRACES_DIR": str(target)})
    assert (target / f"{result.stdout.strip()}.json").exists()
    assert not (workdir / "proveai").exists()


def test_the_docs_cli_lines_for_list_and_status(py, workdir, proveai_cli):
    py.write("pipeline.py", CAPTURE)
    trace_id = py.ok("pipeline.py").stdout.splitlines()[0]
    env = {"PROVEAI_TRACES_DIR": "./traces"}  # the capture quick start wrote to ./traces
    listed = proveai_cli("list", "--traces", "./traces")
    assert listed.returncode == 0 and trace_id in listed.stdout
    assert trace_id in proveai_cli("list", "--outcome", "good", "--version", "v3", env=env).stdout
    assert trace_id in proveai_cli("list", "--no-color", env=env).stdout
    flagged = proveai_cli("status", "--filter", "detection=flagged", "--limit", "10", env=env)
    assert flagged.returncode == 0 and flagged.stdout == "no traces match detection=flagged in traces\n"
    bad = proveai_cli("status", "--filter", "outcome=bad", "--filter", "since=1d", env=env)
    assert bad.returncode == 0 and trace_id not in bad.stdout
    record = f"from proveai import record_outcome; record_outcome('{trace_id}', label='bad', root='./traces')"
    py.ok("-c", record)
    bad = proveai_cli("status", "--filter", "outcome=bad", "--filter", "since=1d", env=env)
    assert trace_id in bad.stdout


API_MAP = snippet(PAGE, "api-map")


def test_the_public_api_map_imports_including_the_engine_surface(py, workdir):
    py.write("api_map.py", API_MAP)
    lines = py.ok("api_map.py").stdout.splitlines()
    assert lines[0] == "b (called by a) got worse, decided by a structural comparison. Why: numbers changed."
    assert lines[1] == "1 trace(s): 1 flagged." and lines[2] == "- regex_match on draft failed in 1 trace(s)"
    assert lines[-1] == "engine ProveAI on_detection AnalyzeResponse"
