"""The client against a real engine: the stream's order, health, errors and retries."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys

import httpx
import pytest

from proveai import ProveAI
from proveai.engine.model import LAYERS
from proveai.errors import ProveAIError
from proveai.traces.otlp import encode_trace
from tests.conftest import isolated_env
from tests.proveai.engine import pipelines
from tests.proveai.engine.engine_kit import client


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_stream_sends_every_stage_in_order_before_the_result(engine):
    t = pipelines.run("exception", seed=4)
    body = json.dumps(encode_trace(t))
    headers = {"Content-Type": "application/json", "X-Prove-Run-Id": "r9", "X-Prove-Mas-Name": "m"}
    raw: list[str] = []
    with httpx.stream("POST", f"{engine.url}/ingest/traces/stream", content=body, headers=headers) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        raw.extend(reply.iter_lines())
    events = [line.split(": ", 1)[1] for line in raw if line.startswith("event: ")]
    ids = [int(line.split(": ", 1)[1]) for line in raw if line.startswith("id: ")]
    assert events == ["received", *["stage"] * len(LAYERS), "result"]
    assert ids == list(range(len(LAYERS) + 2))
    data = [json.loads(line[6:]) for line in raw if line.startswith("data: ")]
    assert [d["name"] for d in data[1:-1]] == list(LAYERS) == [
        "checks", "errors", "loops", "path", "judge", "propagation"]
    assert data[-1]["run_id"] == "r9" and data[-1]["mas_name"] == "m" and data[-1]["customer_id"] is None

    seen: list[str] = []
    response = client(engine.url).analyze(t, on_event=lambda name, d: seen.append(d.get("name", name)))
    assert seen == ["received", *LAYERS, "result"]
    assert [e.get("name", "received") for e in response.events] == ["received", *LAYERS]
    assert [layer.name for layer in response.layers] == list(LAYERS)
    identity = (response.run_id, response.customer_id, response.mas_name)
    assert identity == ("run-7", "acme", "research-pipeline")


def test_analyze_async_and_batch_async_match_the_sync_calls(engine):
    traces = [pipelines.run("loop", seed=1), pipelines.run("clean", seed=2)]
    c = client(engine.url)

    async def both():
        single = await c.analyze_async(traces[0])
        batch = await c.analyze_batch_async(traces)
        return single, batch, await c.health_async()

    single, batch, healthy = asyncio.run(both())
    assert single.propagation[0].agent_name == "researcher" and healthy
    assert [r.detected for r in batch] == [True, False]


def test_health_is_true_for_a_running_engine_and_false_for_none(engine):
    assert client(engine.url).health() is True
    assert client(f"http://127.0.0.1:{closed_port()}").health() is False
    info = httpx.get(f"{engine.url}/health").json()
    assert info["status"] == "ok" and info["layers"] == list(LAYERS) and info["baseline"] is None


def test_an_unreachable_engine_is_one_clear_error_after_the_retries():
    url = f"http://127.0.0.1:{closed_port()}"
    t = pipelines.run("clean")
    for call in (lambda c: c.analyze(t), lambda c: c.analyze_batch([t])):
        with pytest.raises(ProveAIError) as caught:
            call(client(url, retries=2, backoff=0.01))
        err = caught.value
        assert err.message.startswith(f"cannot reach the ProveAI engine at {url} (")
        assert "tried 3 time(s)" in err.message and "proveai engine serve" in err.suggestions[0]
        assert err.__cause__ is None and err.__suppress_context__  # no httpx chain in a traceback


def test_an_unreachable_engine_in_a_user_script_prints_one_line(tmp_path, home):
    script = tmp_path / "s.py"
    script.write_text(
        "import sys\nfrom proveai import ProveAI, trace\nfrom proveai.errors import ProveAIError\n"
        f"c = ProveAI('http://127.0.0.1:{closed_port()}', 'r', 'c', 'm', retries=0)\n"
        "with trace('x') as t: pass\n"
        "try:\n    c.analyze(t)\nexcept ProveAIError as e:\n    print('error:', e.message); sys.exit(2)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=isolated_env(home), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stdout.startswith("error: cannot reach the ProveAI engine at http://127.0.0.1:")


def test_a_server_that_is_not_an_engine_is_named():
    from tests.proveai.model_server import ModelServer

    with ModelServer() as other:  # a real HTTP server that knows nothing of /ingest
        url = other.url
        with pytest.raises(ProveAIError) as caught:
            client(url, retries=0).analyze(pipelines.run("clean"))
    assert caught.value.message.startswith(f"the ProveAI engine at {url} answered 40")


def test_a_missing_sse_library_is_a_clear_error(tmp_path, home):
    script = tmp_path / "s.py"
    script.write_text(
        "import sys\nsys.modules['httpx_sse'] = None\n"
        "from proveai import ProveAI, trace\nfrom proveai.errors import ProveAIError\n"
        "with trace('x') as t: pass\n"
        "try:\n    ProveAI('http://127.0.0.1:9', 'r', 'c', 'm').analyze(t)\n"
        "except ProveAIError as e:\n    print(e.message, '|', e.suggestions[0])\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=isolated_env(home), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "ProveAI.analyze streams with httpx-sse, which is not installed | pip install 'poisson-prove[engine]'"
    )


class _Flaky:
    """A real HTTP front on 127.0.0.1 that answers 503 to the first `failures` requests and
    forwards the rest to the engine (whole bodies, so a stream arrives as one piece)."""

    def __init__(self, target: str, failures: int) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.seen = 0
        flaky = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                flaky.seen += 1
                if flaky.seen <= failures:
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                wanted = ("x-", "content-type")
                headers = {k: v for k, v in self.headers.items() if k.lower().startswith(wanted)}
                reply = httpx.post(target + self.path, content=body, headers=headers, timeout=30)
                self.send_response(reply.status_code)
                self.send_header("Content-Type", reply.headers["content-type"])
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_busy_answers_are_retried_then_reported(engine):
    t = pipelines.run("check", seed=2)
    flaky = _Flaky(engine.url, failures=2)
    try:
        response = client(flaky.url, retries=2, backoff=0.01).analyze(t)
        assert response.propagation[0].agent_name == "synthesizer" and flaky.seen == 3
        assert client(flaky.url, retries=0).analyze_batch([t])[0].detected and flaky.seen == 4
    finally:
        flaky.close()
    always = _Flaky(engine.url, failures=100)
    try:
        with pytest.raises(ProveAIError, match="answered 503"):
            client(always.url, retries=1, backoff=0.01).analyze_batch([t])
        assert always.seen == 2
    finally:
        always.close()


def test_a_malformed_endpoint_is_refused_at_construction():
    with pytest.raises(ProveAIError, match="endpoint must be an http"):
        ProveAI(endpoint="localhost:19000", run_id="r", customer_id="c", mas_name="m")
    with pytest.raises(ProveAIError, match="analyze needs a proveai Trace, not dict"):
        client("http://127.0.0.1:9").analyze({"resourceSpans": []})
