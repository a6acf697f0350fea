"""proveai's spans join the active OpenTelemetry trace (finding D11), with the real SDK.

One script drives every case in one interpreter: a global SDK TracerProvider with an
InMemorySpanExporter, the user's own spans around and inside proveai's, the requests
instrumentor's spans inside an agent; the script prints what it saw as JSON and the tests
below read it. A second script runs without OpenTelemetry and checks that none of it loads.
"""

from __future__ import annotations

import json

import pytest

from tests.proveai.script_kit import read_json

JOINED = r'''
import asyncio, json, sys, threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import requests
from opentelemetry import trace as otel
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from proveai import FileExporter, load_trace, monitor, trace

memory = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(memory))
otel.set_tracer_provider(provider)
tracer = otel.get_tracer("user")
RequestsInstrumentor().instrument()


class Ok(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Ok)
threading.Thread(target=server.serve_forever, daemon=True).start()
URL = f"http://127.0.0.1:{server.server_port}/"


def hexid(number, width):
    return format(number, f"0{width}x")


def seen(span):
    """One finished OTel span: its ids, its parent's, the attributes the tests read."""
    parent = span.parent
    keys = ("gen_ai.agent.name", "openinference.span.kind", "input.value", "output.value",
            "input.mime_type", "output.mime_type", "proveai.inputs", "proveai.output")
    return {
        "name": span.name,
        "trace_id": hexid(span.context.trace_id, 32),
        "span_id": hexid(span.context.span_id, 16),
        "parent": None if parent is None else hexid(parent.span_id, 16),
        "attributes": {k: span.attributes[k] for k in keys if k in span.attributes},
    }


def rows(spans):
    return [[s.name, s.trace_id, s.span_id, s.parent_span_id] for s in spans]


def finished():
    spans = [seen(s) for s in memory.get_finished_spans()]
    memory.clear()
    return spans


def current_ids():
    context = otel.get_current_span().get_span_context()
    return [hexid(context.trace_id, 32), hexid(context.span_id, 16)] if context.is_valid else None


@monitor("inner", model="gpt-4o-mini")
def inner(x):
    with tracer.start_as_current_span("user-child"):
        requests.get(URL, timeout=30).close()
    return x.upper()


@monitor("outer", kind="CHAIN")
def outer(x):
    return inner(x)


@monitor("fails", kind="TOOL", operation="execute_tool")
def fails(x):
    raise LookupError("no such record")


@monitor("async-agent")
async def async_agent(x):
    await asyncio.sleep(0)
    with tracer.start_as_current_span("user-in-async"):
        return x


@monitor("gen-agent")
def gen_agent(n):
    for i in range(n):
        with tracer.start_as_current_span(f"user-in-gen-{i}"):
            pass
        yield i


out = {}
store = sys.argv[1]

# 1. a user span around the trace: one OpenTelemetry trace, nested by the real parents
with tracer.start_as_current_span("user-root") as root:
    out["root"] = current_ids()
    with trace("joined", exporters=[FileExporter(store)]) as t:
        outer("hi")
        out["during_trace"] = current_ids()
        try:
            fails("x")
        except LookupError:
            pass
        out["after_raise"] = current_ids()
    out["after_trace"] = current_ids()
out["joined"] = {"trace_id": t.trace_id, "spans": rows(t.spans)}
out["joined_otel"] = finished()
loaded = load_trace(f"{store}/{t.trace_id}.json")
out["joined_loaded"] = {"trace_id": loaded.trace_id, "spans": rows(loaded.spans),
                        "roots": [s.name for s in loaded.roots()]}

# 2. two proveai traces under one user span: one OTel trace, two stored traces
with tracer.start_as_current_span("user-request"):
    with trace("first", exporters=[FileExporter(store)]) as first:
        outer("a")
    with trace("second", exporters=[FileExporter(store)]) as second:
        outer("b")
out["two"] = {"ids": [first.trace_id, second.trace_id],
              "span_trace_ids": sorted({s.trace_id for s in [*first.spans, *second.spans]})}
out["two_otel"] = finished()

# 3. no user span, a provider configured: the agents' spans are still the parents of the user's
with trace("own") as own:
    outer("c")
out["own"] = {"trace_id": own.trace_id, "spans": rows(own.spans)}
out["own_otel"] = finished()

# 4. a user span opened inside the trace, around a top-level agent: its child
with tracer.start_as_current_span("user-root-2"):
    with trace("wrapped") as wrapped:
        with tracer.start_as_current_span("user-step"):
            inner("d")
out["wrapped_otel"] = finished()

# 5. async and generator agents
async def pipeline():
    with tracer.start_as_current_span("user-async-root"):
        async with trace("async") as t:
            await async_agent("e")
    return t

pipeline_trace = asyncio.run(pipeline())
out["async_otel"] = finished()
with tracer.start_as_current_span("user-gen-root"):
    with trace("gen") as gen_trace:
        out["gen_items"] = list(gen_agent(2))
        out["gen_after"] = current_ids()
out["gen_otel"] = finished()
# 6. under a span the sampler dropped (a remote parent, not sampled): nothing reaches the provider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
dropped = NonRecordingSpan(SpanContext(0xABC, 0xDEF, True, TraceFlags(TraceFlags.DEFAULT)))
with otel.use_span(dropped):
    with trace("unsampled") as unsampled:
        inner("f")
out["unsampled"] = {"spans": rows(unsampled.spans), "otel": finished()}
out["outside"] = current_ids()
server.shutdown()
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def joined(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, object]:
    """What the joined script saw (run once for the module's tests) and its store folder."""
    import subprocess
    import sys

    from tests.conftest import isolated_env

    folder = tmp_path_factory.mktemp("otel")
    home = folder / "home"
    home.mkdir()
    script = folder / "joined.py"
    script.write_text(JOINED, encoding="utf-8")
    store = folder / "store"
    done = subprocess.run([sys.executable, str(script), str(store)], cwd=folder, env=isolated_env(home),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1]), store


def by_name(spans: list[dict]) -> dict[str, dict]:
    return {span["name"]: span for span in spans}


def test_proveai_spans_take_the_active_trace_and_nest_under_the_user_span(joined) -> None:
    out, _ = joined
    root_trace, root_span = out["root"]
    spans = by_name(out["joined_otel"])
    assert set(spans) == {"user-root", "invoke_agent outer", "invoke_agent inner", "user-child", "GET",
                          "execute_tool fails"}, sorted(spans)
    assert {span["trace_id"] for span in spans.values()} == {root_trace}  # one trace, not two
    assert spans["invoke_agent outer"]["parent"] == root_span
    assert spans["execute_tool fails"]["parent"] == root_span
    assert spans["invoke_agent inner"]["parent"] == spans["invoke_agent outer"]["span_id"]
    # a user span and an instrumentor span opened inside an agent are the agent's children
    assert spans["user-child"]["parent"] == spans["invoke_agent inner"]["span_id"]
    assert spans["GET"]["parent"] == spans["user-child"]["span_id"]
    # the OTel context is given back: between agents, after one that raised, after the trace
    assert out["during_trace"] == out["root"] == out["after_raise"] == out["after_trace"]
    assert out["outside"] is None


def test_the_stored_trace_keeps_its_own_id_and_its_spans_the_joined_trace_id(joined) -> None:
    out, store = joined
    root_trace, root_span = out["root"]
    live, loaded = out["joined"], out["joined_loaded"]
    assert live["trace_id"] != root_trace  # the store's key stays proveai's own
    assert loaded["trace_id"] == live["trace_id"] and loaded["spans"] == live["spans"]
    for _name, trace_id, span_id, _parent in loaded["spans"]:
        assert trace_id == root_trace and len(span_id) == 16 and int(span_id, 16) > 0
    parents = {name: parent for name, _t, _s, parent in loaded["spans"]}
    assert parents["outer"] == parents["fails"] == root_span
    assert sorted(loaded["roots"]) == ["fails", "outer"]  # a parent outside the file is a root's
    document = read_json(store / f"{live['trace_id']}.json")
    resource = {a["key"]: a["value"] for a in document["resourceSpans"][0]["resource"]["attributes"]}
    assert resource["proveai.trace.id"] == {"stringValue": live["trace_id"]}
    stored = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert {span["traceId"] for span in stored} == {root_trace}
    # OpenInference names go to the provider only: the stored file's attributes are as before
    keys = {a["key"] for span in stored for a in span["attributes"]}
    assert not keys & {"openinference.span.kind", "input.value", "output.value"}


def test_two_traces_under_one_user_span_are_one_otel_trace_and_two_stored_traces(joined) -> None:
    out, store = joined
    first, second = out["two"]["ids"]
    assert first != second and (store / f"{first}.json").is_file() and (store / f"{second}.json").is_file()
    assert len(out["two"]["span_trace_ids"]) == 1
    assert len({span["trace_id"] for span in out["two_otel"]}) == 1


def test_without_a_user_span_the_agents_are_the_parents_of_the_users_spans(joined) -> None:
    out, _ = joined
    spans = by_name(out["own_otel"])
    own = out["own"]
    assert {span["trace_id"] for span in spans.values()} == {own["trace_id"]}
    assert spans["invoke_agent outer"]["parent"] is None
    assert spans["user-child"]["parent"] == spans["invoke_agent inner"]["span_id"]


def test_a_user_span_inside_the_trace_is_the_parent_of_the_agent_called_in_it(joined) -> None:
    spans = by_name(joined[0]["wrapped_otel"])
    assert spans["invoke_agent inner"]["parent"] == spans["user-step"]["span_id"]
    assert spans["user-step"]["parent"] == spans["user-root-2"]["span_id"]
    assert len({span["trace_id"] for span in spans.values()}) == 1


def test_async_and_generator_agents_are_the_current_span_of_their_bodies(joined) -> None:
    out, _ = joined
    spans = by_name(out["async_otel"])
    assert spans["user-in-async"]["parent"] == spans["invoke_agent async-agent"]["span_id"]
    assert spans["invoke_agent async-agent"]["parent"] == spans["user-async-root"]["span_id"]
    spans = by_name(out["gen_otel"])
    assert out["gen_items"] == [0, 1]
    agent = spans["invoke_agent gen-agent"]
    assert spans["user-in-gen-0"]["parent"] == spans["user-in-gen-1"]["parent"] == agent["span_id"]
    assert agent["parent"] == spans["user-gen-root"]["span_id"]
    assert out["gen_after"][1] == spans["user-gen-root"]["span_id"]  # the consumer is not inside it


def test_spans_handed_to_the_provider_carry_openinference_names(joined) -> None:
    spans = by_name(joined[0]["joined_otel"])
    outer = spans["invoke_agent outer"]["attributes"]
    inner = spans["invoke_agent inner"]["attributes"]
    fails = spans["execute_tool fails"]["attributes"]
    assert outer["openinference.span.kind"] == "CHAIN"
    assert inner["openinference.span.kind"] == "AGENT"  # kind UNKNOWN, operation invoke_agent
    assert fails["openinference.span.kind"] == "TOOL"
    assert inner["input.value"] == inner["proveai.inputs"] == json.dumps({"x": "hi"}, separators=(",", ":"))
    assert inner["output.value"] == inner["proveai.output"] == '"HI"'
    assert inner["input.mime_type"] == inner["output.mime_type"] == "application/json"


NO_OTEL = r'''
import sys
from proveai import monitor, trace

@monitor("leaf")
def leaf(x):
    return x

with trace("plain") as t:
    leaf("a")
assert not [name for name in sys.modules if name.startswith("opentelemetry")], "opentelemetry was imported"
assert t.spans[0].trace_id == t.trace_id and t.spans[0].parent_span_id is None
print("ok")
'''


def test_without_opentelemetry_loaded_nothing_of_it_is_imported(py) -> None:
    py.write("plain.py", NO_OTEL)
    assert py.ok("plain.py").stdout.strip() == "ok"


def test_the_capture_page_example_runs_as_written(py) -> None:
    from tests.docs.snippets import snippet

    py.write("joined.py", snippet("proveai-capture.md", "otel-join"))
    assert py.ok("joined.py").stdout.strip() == "True True"


def test_under_an_unsampled_span_the_trace_joins_it_but_the_provider_gets_nothing(joined) -> None:
    unsampled = joined[0]["unsampled"]
    assert [row[1] for row in unsampled["spans"]] == [format(0xABC, "032x")]
    assert [row[3] for row in unsampled["spans"]] == [format(0xDEF, "016x")]
    # neither proveai's span nor the user and HTTP spans inside the agent were recorded
    assert unsampled["otel"] == []
