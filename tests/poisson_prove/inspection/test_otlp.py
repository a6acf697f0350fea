"""One span tree per episode, written as OTLP JSON the OpenTelemetry proto accepts.

A real sweep (the installed `poisson-prove`) of a rollout whose steps call `@monitor` agents
that call a real HTTP server on 127.0.0.1 through httpx, with the real httpx instrumentor on:
every span of an episode (steps, agent calls, instrumentor spans) shares the episode's trace
id and nests under its real parent; `inspect --episode C/R --otlp` writes that tree, parsed
here by `opentelemetry-proto` (ParseDict, no unknown field allowed)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from poisson_prove.inspection.spans import episode_spans
from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import write

AGENT = '''
import os
import httpx
from poisson_prove import Episode, step
from proveai import monitor

URL = os.environ["TOOL_URL"]

@monitor("lookup", kind="TOOL")
def lookup(ticket):
    return httpx.get(f"{URL}/lookup/{ticket}", timeout=5).text

@monitor("answer", parent_agent="lookup", model="fake-model")
def answer(ticket):
    with step("fetch"):
        found = lookup(ticket)
    return found.upper()

def rollout(cfg, seed):
    with step("turn", ticket=cfg["ticket"]):
        reply = answer(cfg["ticket"])
    httpx.get(f"{URL}/log", timeout=5)  # nothing open: a child of the episode itself
    return Episode("ok" if reply else "bad", 1, 5, {"case_id": cfg["ticket"]})
'''
SPEC = """
target = "agent:rollout"
target_id = "otlp-agent"
replicates = 4
[axes.ticket]
type = "categorical"
values = ["refund"]
[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
[capture]
instrument = ["httpx"]
max_observation_bytes = 4096
"""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"found"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def _hex_ids_to_base64(node: Any) -> Any:
    """OTLP/JSON writes ids as hex; the proto's JSON mapping reads bytes as base64."""
    if isinstance(node, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode() if k in ("traceId", "spanId", "parentSpanId") and v
            else _hex_ids_to_base64(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids_to_base64(v) for v in node]
    return node


def test_an_episode_is_one_span_tree_and_its_otlp_json_parses(
    prove: Any, workdir: Path, server_url: str
) -> None:
    write(workdir, "agent.py", AGENT)
    (workdir / "prove.toml").write_text(SPEC, encoding="utf-8")
    swept = prove("sweep", "--yes", "--max-mde", "1", env={"TOOL_URL": server_url}, timeout=300)
    assert swept.returncode == 0, swept.stderr
    batches = sorted((workdir / "prove-runs").glob("*/episodes/*.parquet"))
    rows = [row for batch in batches for row in pq.read_table(batch).to_pylist()]
    assert len(rows) == 4
    trace_ids = set()
    for row in rows:
        spans = episode_spans(row["spans"])
        tree = [("  " * s.depth) + f"{s.source} {s.name}" for s in spans]
        assert tree == [
            "step turn",
            "  monitor answer",
            "    step fetch",
            "      monitor lookup",
            "        otel GET",
            "otel GET",
        ], tree
        assert len({s.trace_id for s in spans}) == 1  # one trace per episode
        trace_ids.add(spans[0].trace_id)
        assert [s.agent for s in spans if s.source == "monitor"] == ["answer", "lookup"]
        answer = spans[1]
        assert answer.attributes["gen_ai.request.model"] == "fake-model"
        assert answer.attributes["proveai.parent_agent"] == "lookup"
        assert answer.attributes["proveai.output_hash"].startswith("sha256:")
        raw = {s["span_id"]: s for s in json.loads(row["spans"])}
        assert all(s.span_id in raw for s in spans)  # the stored ids, not derived ones
    assert len(trace_ids) == 4  # each episode its own trace

    exported = prove("inspect", "--episode", "ticket=refund/1", "--otlp")
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    request = ExportTraceServiceRequest()
    ParseDict(_hex_ids_to_base64(document), request, ignore_unknown_fields=False)
    (resource_spans,) = request.resource_spans
    resource = {kv.key: kv.value for kv in resource_spans.resource.attributes}
    assert resource["service.name"].string_value == "otlp-agent"
    assert resource["poisson_prove.replicate"].int_value == 1
    assert resource["poisson_prove.outcome"].string_value == "ok"
    (scope_spans,) = resource_spans.scope_spans
    spans = list(scope_spans.spans)
    assert len(spans) == 7  # the episode's root and its six spans
    assert len({s.trace_id for s in spans}) == 1
    by_id = {s.span_id: s for s in spans}
    (root,) = [s for s in spans if not s.parent_span_id]
    assert root.name == "episode ticket refund/1"

    def path(span: Any) -> str:
        names = []
        while span.parent_span_id:
            names.append(span.name)
            span = by_id[span.parent_span_id]  # every parent is in the document
        return " > ".join(reversed(names))

    assert sorted(path(s) for s in spans if s is not root) == [
        "GET",
        "turn",
        "turn > answer",
        "turn > answer > fetch",
        "turn > answer > fetch > lookup",
        "turn > answer > fetch > lookup > GET",
    ]
    for span in spans:
        assert span.end_time_unix_nano >= span.start_time_unix_nano > 0
    get = next(s for s in spans if path(s).endswith("lookup > GET"))
    assert get.kind == get.SPAN_KIND_CLIENT
    stored = next(r for r in rows if r["replicate"] == 1)
    assert bytes.hex(spans[0].trace_id) == episode_spans(stored["spans"])[0].trace_id


def test_otlp_needs_one_episode(prove: Any, workdir: Path) -> None:
    result = prove("inspect", "--otlp")
    assert_clean_error(result, 2, "--otlp writes one episode")
