"""[capture] with the real httpx, requests and openai instrumentors against a real server on
127.0.0.1: content = false stores nothing of the content, max_observation_bytes bounds every
stored value, and an instrumentor that is installed but does not switch on is named."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.poisson_prove.helpers import write

SECRET = "SECRET-7f3a"
AGENT = f'''
import os
import httpx, requests
from opentelemetry import trace
from poisson_prove import Episode, record, step

URL = os.environ["TOOL_URL"]
SECRET = "{SECRET}"

def rollout(cfg, seed):
    with step("plan", prompt="plan the refund " + SECRET + " " + "long " * 40) as attrs:
        attrs["hits"] = 3
    httpx.get(f"{{URL}}/tool/search?q={{SECRET}}&key={{SECRET}}", timeout=5)
    requests.post(f"{{URL}}/tool/post?token={{SECRET}}", data=SECRET * 10, timeout=5)
    # A hand-instrumented model call, writing content under several conventions.
    tracer = trace.get_tracer("hand")
    with tracer.start_as_current_span("chat tiny-model") as span:
        span.set_attribute("gen_ai.request.model", "tiny-model")
        span.set_attribute("gen_ai.usage.input_tokens", 123)
        span.set_attribute("gen_ai.usage.output_tokens", 45)
        span.set_attribute("gen_ai.response.finish_reasons", ["stop"])
        for key in ("gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
                    "gen_ai.prompt", "gen_ai.completion", "gen_ai.input.messages", "llm.prompts",
                    "input.value", "output.value", "http.request.body", "http.response.body",
                    "custom.whatever"):
            span.set_attribute(key, SECRET + " content")
        span.add_event("gen_ai.content.prompt", {{"gen_ai.prompt": SECRET}})
        span.set_status(trace.Status(trace.StatusCode.ERROR, SECRET + " in the status text"))
    record("answer", text="the answer is " + SECRET + " " + "é" * 100)
    return Episode("ok", 1, 5, {{"case_id": cfg["x"]}})
'''
SPEC = """
target = "agent:rollout"
target_id = "agent"
replicates = 4
[axes.x]
type = "categorical"
values = ["a"]
[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
[capture]
instrument = {instrument}
content = {content}
max_observation_bytes = {limit}
"""
# The server answers GET only; the POST is answered 501 by http.server, which is still a span.


def _project(workdir: Path, *, content: bool, limit: int, instrument: list[str]) -> None:
    write(workdir, "agent.py", AGENT)
    text = SPEC.format(instrument=json.dumps(instrument), content=str(content).lower(), limit=limit)
    (workdir / "prove.toml").write_text(text, encoding="utf-8")


def _run(prove, server_url: str) -> Any:
    return prove("sweep", "--yes", "--max-mde", "1", "--store", "runs", env={"TOOL_URL": server_url})


def _rows(store: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for batch in sorted(store.glob("*/episodes/*.parquet")):
        rows.extend(pq.read_table(batch).to_pylist())
    return rows


def _values(node: Any) -> list[Any]:
    """Every stored value in a span: names, error texts and attribute values."""
    out = []
    for span in node:
        out.append(span["name"])
        if "error" in span:
            out.append(span["error"])
        out.extend(span["attributes"].values())
    return out


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def test_content_false_stores_no_content_and_bounds_every_value(
    prove: Any, workdir: Path, tool_server: Any
) -> None:
    _project(workdir, content=False, limit=48, instrument=["httpx", "requests"])
    result = _run(prove, tool_server.url)
    assert result.returncode == 0, result.stderr
    assert "capture httpx, requests; content left out, values up to 48 bytes" in result.stdout
    assert "capture without spans" not in result.stdout
    rows = _rows(workdir / "runs")
    assert len(rows) == 4
    for row in rows:
        spans = json.loads(row["spans"])
        # Nothing an instrumentor saw: attributes, names, status texts, events, URLs' queries.
        # (record() and step() store what the rollout itself chose to give them.)
        assert SECRET not in json.dumps([s for s in spans if s["source"] != "step"])
        by_source = {(s["source"], s["name"]) for s in spans}
        assert ("step", "plan") in by_source and ("step", "answer") in by_source
        otel = [s for s in spans if s["source"] == "otel"]
        methods = sorted(s["attributes"].get("http.method") or s["attributes"].get("http.request.method")
                         for s in otel if s["name"] in ("GET", "POST"))
        assert methods == ["GET", "POST"]  # one span from each real instrumentor
        chat = next(s for s in otel if s["name"] == "chat tiny-model")
        assert chat["attributes"] == {
            "gen_ai.request.model": "tiny-model",
            "gen_ai.usage.input_tokens": 123,
            "gen_ai.usage.output_tokens": 45,
            "gen_ai.response.finish_reasons": ["stop"],
        }
        assert chat["status"] == "error"
        for value in _values(spans):
            assert _size(value) <= 48, value
        plan = next(s for s in spans if s["name"] == "plan")
        assert plan["attributes"]["hits"] == 3
        assert plan["attributes"]["prompt"].endswith("…")  # record/step values are cut too


def test_content_true_keeps_content_still_bounded(
    prove: Any, workdir: Path, tool_server: Any
) -> None:
    _project(workdir, content=True, limit=64, instrument=["httpx"])
    result = _run(prove, tool_server.url)
    assert result.returncode == 0, result.stderr
    assert "content kept, values up to 64 bytes" in result.stdout
    for row in _rows(workdir / "runs"):
        spans = json.loads(row["spans"])
        chat = next(s for s in spans if s["name"] == "chat tiny-model")
        assert chat["attributes"]["gen_ai.system_instructions"] == f"{SECRET} content"
        for value in _values(spans):
            assert _size(value) <= 64, value


def test_an_installed_instrumentor_that_cannot_switch_on_is_named(
    prove: Any, workdir: Path, tool_server: Any
) -> None:
    # opentelemetry-instrumentation-openai-v2 is installed (the agent extra); the openai client
    # is not, so the instrumentor cannot load: the plan, the done line and the manifest say so.
    _project(workdir, content=False, limit=64, instrument=["httpx", "openai", "absent"])
    result = _run(prove, tool_server.url)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    installed = ", ".join(sorted(ep.name for ep in entry_points(group="opentelemetry_instrumentor")))
    assert (
        "capture httpx, openai (fails to load: no spans), absent (not installed: no spans); "
        f"installed: {installed}; content left out, values up to 64 bytes"
    ) in lines
    done = next(i for i, line in enumerate(lines) if line.startswith("done "))
    assert lines[done + 1].startswith("capture without spans from openai (fails to load: ModuleNotFoundError")
    assert "absent (not installed" in lines[done + 1]
    manifest = json.loads(next((workdir / "runs").glob("*/manifest.json")).read_text())
    missing = manifest["capture"]["missing"]
    assert missing["openai"].startswith("fails to load: ModuleNotFoundError: No module named 'openai'")
    assert missing["absent"].startswith("not installed")
    assert "httpx" not in missing
    plan = prove("sweep", "--dry-run", "--json", "--max-mde", "1", env={"TOOL_URL": tool_server.url})
    assert plan.returncode == 0, plan.stderr
    assert set(json.loads(plan.stdout)["capture"]["missing"]) == {"openai", "absent"}
