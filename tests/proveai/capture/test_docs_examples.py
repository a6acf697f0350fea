"""The capture snippets of the SDK readme, run as written (with a stand-in llm and crm)."""

from __future__ import annotations

import json

from tests.proveai.capture.conftest import STAND_INS, read_json, read_jsonl, trace_files

QUICK_START = STAND_INS + '''
from proveai import monitor, Trace, FileExporter

@monitor("classify", model="gpt-4o-mini")
def classify(ticket: str) -> str:
    return llm.invoke(f"Classify: {ticket}")

@monitor("draft", parent_agent="classify", model="gpt-4o-mini")
def draft(category: str) -> str:
    return llm.invoke(f"Draft a reply for: {category}")

@monitor("qa_check", parent_agent="draft", model="claude-haiku-4-5")
def qa_check(reply: str) -> str:
    return llm.invoke(f"QA the reply: {reply}")

with Trace(exporters=[FileExporter()]) as t:
    cat = classify("My order arrived broken")
    reply = draft(cat)
    qa_check(reply)

print(t.trace_id)
'''

CAPTURE = STAND_INS + '''
from proveai import (
    monitor, trace, FileExporter,
    assert_json, regex_match, tool_called, LLMJudge,
)

@monitor("classify", model="gpt-4o-mini", kind="CHAT_MODEL", version="v3")
def classify(ticket: str) -> str:
    return llm.invoke(f"Classify: {ticket}")

@monitor("crm_lookup", parent_agent="classify", kind="TOOL")
def crm_lookup(category: str) -> dict:
    return crm.fetch(category)

@monitor("draft", parent_agent="crm_lookup", model="gpt-4o-mini")
def draft(category: str, history: dict) -> str:
    return llm.invoke(...)

@monitor("qa_check", parent_agent="draft", model="claude-haiku-4-5")
def qa_check(draft_text: str) -> str:
    return llm.invoke(f"Critique: {draft_text}")

exporter = FileExporter("./traces")

with trace("ticket-triage", exporters=[exporter], checks=[
    assert_json("classify"),
    tool_called("crm_lookup"),
    regex_match("draft", r"\\[\\d+\\]"),               # citation marker
    LLMJudge("qa_check", "must catch obvious errors"),
]) as t:
    cat = classify("My order arrived broken")
    history = crm_lookup(cat)
    response = draft(cat, history)
    qa_check(response)

print(t.trace_id)
print(t.outcome)
for r in t.check_results:
    print(r.name, r.label, r.reason)
'''

SURFACE = STAND_INS + '''
from proveai import monitor, FileExporter, trace, record_outcome, load_trace, iter_traces
from proveai import (
    Check, RuleCheck,
    assert_json, regex_match, tool_called, not_contains,
    output_length, schema_match, contract_conformance,
    LLMJudge,
)
from pydantic import BaseModel

class PydanticDraftModel(BaseModel):
    text: str

@monitor(
    "agent_name",                # required
    operation="invoke_agent",    # invoke_agent | chat | execute_tool
    description="agent role",
    model="gpt-4o-mini",         # used by replay to dispatch the right Provider
    parent_agent="upstream",     # topology edge: parent → this agent
    version="v3",                # gen_ai.version — filter replays by build
    kind="CHAT_MODEL",           # MLflow taxonomy — drives per-type Tier-1 diff
)
def my_agent(query: str) -> str:
    ...

with trace(
    "my-service",
    exporters=[FileExporter()],            # default: ./proveai/traces
    checks=[...],
) as t:
    ...

checks = [
    assert_json("classify"),
    schema_match("classify", {"type": "object", "required": ["category"]}),
    contract_conformance("draft", PydanticDraftModel),
    regex_match("draft", r"\\[\\d+\\]"),
    output_length("draft", min_chars=50, max_chars=2000),
    tool_called("crm_lookup"),
    not_contains("response", "I don't know"),
    LLMJudge("qa_check", "must catch obvious errors", model="gpt-4o-mini"),
]
judge = LLMJudge("qa_check", "must catch obvious errors", trigger=lambda t: t.passed("json_valid"))

exporter = FileExporter()  # default: ./proveai/traces (honors $PROVEAI_TRACES_DIR)

with trace("svc", exporters=[exporter]) as t:
    my_agent("hello")

trace_id = t.trace_id
record_outcome(trace_id, label="good", score=0.95, reason="thumbs-up from user", root="./proveai/traces")

trace = load_trace(f"./proveai/traces/{trace_id}.json")
for trace in iter_traces("./proveai/traces", filter={"outcome": "good"}):
    print("good", trace.trace_id)
iter_traces("./proveai/traces", filter={"outcome": "good", "version": "v3"})
found = list(iter_traces("./proveai/traces", filter=lambda t: t.span("retriever") is not None))
print("retriever", len(found))
print("svc", trace_id)
'''


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


API_MAP = '''
from proveai import (
    monitor, trace, Trace, FileExporter, add_exporter,
    Check, RuleCheck, LLMJudge,
    assert_json, regex_match, tool_called, not_contains,
    output_length, schema_match, contract_conformance,
    record_outcome,
)
from proveai import (
    load_trace, iter_traces,
    replay_span, replay_trace,
    text_diff, llm_judge, attribute_edges,
    CheckResult, ReplayedSpan, ReplayedTrace, EdgeVerdict,
)
from proveai import (
    Store,                                         # project-local layout (./proveai/)
    Detection, AnalyzeResponse,                    # analysis result + persistence
    Baseline,                                      # named, versioned trace_id snapshot
    Experiment,                                    # named override set (YAML)
    Run,                                           # replay+attribution execution dir
    Snapshot, AgentDefinition, ExpectedIO,         # pinned known-good agent I/O
    EngineCache, EngineCacheMiss,                  # offline engine response cache
)
from proveai import Provider, OpenAICompatibleProvider, AnthropicProvider, register_provider, dispatch
from proveai.cache import ResponseCache, CachedProvider, cached_dispatch, default_cache, set_default_cache
from proveai.providers.embedding import (
    LocalEmbeddingAdapter, OpenAICompatibleEmbeddingAdapter, cosine_similarity,
)
from proveai.narrative.mast import render as render_detection, narrate_cohort
from proveai.narrative.verdicts import render as render_verdict
from proveai.report import render_html, write_html_report

print(render_verdict(EdgeVerdict("a", "b", "s1", "regressed", 1, "numbers changed", 1.0, "1", "2", "")))
print(narrate_cohort([{"trace_id": "t1", "status": "flagged", "checks_run": 1,
                       "fired": [{"name": "regex_match", "agent": "draft", "label": "bad"}]}]))
# Engine integration (original)
from proveai import ProveAI, on_detection
print("engine", ProveAI.__name__, on_detection.__name__, AnalyzeResponse.__name__)
'''


def test_the_public_api_map_imports_including_the_engine_surface(py, workdir):
    py.write("api_map.py", API_MAP)
    lines = py.ok("api_map.py").stdout.splitlines()
    assert lines[0] == "b (called by a) got worse, decided by a structural comparison. Why: numbers changed."
    assert lines[1] == "1 trace(s): 1 flagged." and lines[2] == "- regex_match on draft failed in 1 trace(s)"
    assert lines[-1] == "engine ProveAI on_detection AnalyzeResponse"
