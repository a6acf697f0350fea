"""engine/server.py: the engine's app served by its own functions (create_app, bind, serve) in
a process of its own on 127.0.0.1, as `proveai engine serve` runs them: health, batch and
stream ingestion, the body limit however the body is sent, nesting, the JSON-only rule, the
refusal of what a web page sends, and a drained stop on Ctrl-C."""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from prove_common.loopback import HOST
from proveai.engine.ingest import MAX_BODY_BYTES
from proveai.engine.model import LAYERS
from proveai.engine.server import bind, sse
from proveai.errors import ProveAIError
from proveai.traces.otlp import encode_trace
from tests.conftest import isolated_env
from tests.proveai.engine import pipelines

SERVER = """
import sys
from pathlib import Path

from proveai.engine.layers import EngineSettings
from proveai.engine.server import bind, create_app, serve

sock = bind(0)
host, port = sock.getsockname()
print(host, port, flush=True)
try:
    serve(create_app(EngineSettings(judge_max=2, max_iterations=5), Path(sys.argv[1])), sock)
except KeyboardInterrupt:  # uvicorn drains, then re-raises the Ctrl-C it caught
    print("interrupted", flush=True)
print("socket closed:", sock.fileno() == -1, flush=True)
"""


@dataclass
class Served:
    process: subprocess.Popen[str]
    host: str
    url: str
    store: Path


@pytest.fixture
def served(tmp_path: Path, home: Path) -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tmp_path / "store")],
        cwd=tmp_path, env=isolated_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    host, port = process.stdout.readline().split()
    try:
        yield Served(process, host, f"http://{host}:{port}", tmp_path / "store")
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=20)


def test_a_server_event_is_one_sse_frame() -> None:
    assert sse("stage", {"name": "checks", "n": 1}, 3) == (
        b'id: 3\nevent: stage\ndata: {"name":"checks","n":1}\n\n'
    )


def test_bind_listens_on_loopback_only_and_a_taken_port_is_one_error() -> None:
    sock = bind(0)
    try:
        host, port = sock.getsockname()
        assert host == HOST == "127.0.0.1"
        with pytest.raises(ProveAIError) as caught:
            bind(port)
    finally:
        sock.close()
    error = caught.value
    assert error.message.startswith(f"cannot listen on 127.0.0.1:{port}: ")
    assert error.suggestions[0].startswith(f"proveai engine serve --port {port + 1}")


def test_health_says_what_the_engine_was_started_with_and_counts_analyses(served: Served) -> None:
    assert served.host == "127.0.0.1"
    health = httpx.get(f"{served.url}/health").json()
    assert {k: health[k] for k in ("status", "engine", "layers", "baseline", "judge", "judge_max")} == {
        "status": "ok", "engine": "proveai", "layers": list(LAYERS), "baseline": None, "judge": None,
        "judge_max": 2,
    }
    assert (health["max_iterations"], health["store"], health["analyzed"]) == (5, str(served.store), 0)
    assert httpx.post(f"{served.url}/health").status_code == 405
    body = encode_trace(pipelines.run("clean", seed=1))
    body["resourceSpans"] += encode_trace(pipelines.run("loop", seed=2))["resourceSpans"]
    headers = {"X-Prove-Run-Id": "run-9", "X-Prove-Customer-Id": "acme", "X-Prove-Mas-Name": "research"}
    batch = httpx.post(f"{served.url}/ingest/traces", json=body, headers=headers, timeout=60).json()
    assert batch["count"] == 2
    clean, looped = batch["results"]
    assert (clean["detected"], looped["detected"]) == (False, True)
    assert {(r["run_id"], r["customer_id"], r["mas_name"]) for r in batch["results"]} == {
        ("run-9", "acme", "research")
    }
    assert Path(looped["stored"]).parent == served.store and Path(looped["stored"]).exists()
    assert (served.store / f"{looped['trace_id']}.json").exists()  # the trace itself, kept with it
    assert httpx.get(f"{served.url}/health").json()["analyzed"] == 2


def test_the_stream_sends_received_each_stage_then_the_result(served: Served) -> None:
    captured = pipelines.run("exception", seed=4)
    with httpx.stream(
        "POST", f"{served.url}/ingest/traces/stream", json=encode_trace(captured), timeout=60
    ) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        assert reply.headers["cache-control"] == "no-store"
        frames = reply.read().decode().split("\n\n")
    events = [dict(line.split(": ", 1) for line in frame.splitlines()) for frame in frames if frame]
    assert [e["event"] for e in events] == ["received", *["stage"] * len(LAYERS), "result"]
    assert [int(e["id"]) for e in events] == list(range(len(LAYERS) + 2))
    received = json.loads(events[0]["data"])
    assert (received["trace_id"], received["spans"]) == (captured.trace_id, len(captured.spans))
    assert [json.loads(e["data"])["name"] for e in events[1:-1]] == list(LAYERS)
    result = json.loads(events[-1]["data"])
    assert result["detected"] and result["propagation"][0]["agent_name"] == "researcher"
    assert httpx.get(f"{served.url}/health").json()["analyzed"] == 1


def _address(served: Served) -> tuple[str, int]:
    host, port = served.url.removeprefix("http://").split(":")
    return host, int(port)


def _answer(conn: socket.socket) -> tuple[bytes, dict]:
    """(status line, JSON body) of the one answer on a raw connection."""
    reply = b""
    while b"}" not in reply:
        chunk = conn.recv(65536)
        if not chunk:
            break
        reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], json.loads(body)


def _stopped_stderr(served: Served) -> str:
    served.process.send_signal(signal.SIGINT)
    _, err = served.process.communicate(timeout=30)
    return err


def test_a_body_over_the_limit_is_refused_before_it_is_read(served: Served) -> None:
    with socket.create_connection(_address(served), timeout=30) as conn:
        conn.sendall(
            f"POST /ingest/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode()
        )
        status, body = _answer(conn)
    assert status == b"HTTP/1.1 413 Request Entity Too Large"
    assert body == {"error": f"body of {MAX_BODY_BYTES + 1} bytes is over the {MAX_BODY_BYTES}-byte limit"}


def test_a_chunked_body_is_counted_and_refused_at_the_limit(served: Served) -> None:
    """No length is declared: the engine counts while it reads and stops at the limit, so a
    client sending twice the limit gets 413 having sent little more than the limit."""
    piece = b" " * (1 << 20)
    frame = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    sent = 0
    with socket.create_connection(_address(served), timeout=10) as conn:
        conn.sendall(
            b"POST /ingest/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        while sent < 2 * MAX_BODY_BYTES and not select.select([conn], [], [], 0)[0]:
            try:
                conn.sendall(frame)
            except (TimeoutError, BrokenPipeError, ConnectionResetError):
                break  # the engine stopped reading
            sent += len(piece)
        else:
            if sent >= 2 * MAX_BODY_BYTES:
                conn.sendall(b"0\r\n\r\n")  # the whole body went in: let the answer come
        status, body = _answer(conn)
    assert status == b"HTTP/1.1 413 Request Entity Too Large", (status, body, sent)
    assert body == {"error": f"the body is over the {MAX_BODY_BYTES}-byte limit"}
    socket_buffers = 16 * (1 << 20)  # what the kernel may take in while the engine stops
    assert sent <= MAX_BODY_BYTES + socket_buffers, sent
    assert httpx.get(f"{served.url}/health").status_code == 200


def _nested_string_value() -> dict:
    """A valid trace whose one span's output is JSON text nested 5,000 deep."""
    document = encode_trace(pipelines.run("clean", seed=3))
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    for attribute in span["attributes"]:
        if attribute["key"].endswith("output") and "stringValue" in attribute["value"]:
            attribute["value"]["stringValue"] = "[" * 5000 + "]" * 5000
            return document
    raise AssertionError("no output attribute in the encoded span")


@pytest.mark.parametrize("path", ["/ingest/traces", "/ingest/traces/stream"])
def test_deeply_nested_json_is_the_documented_400(served: Served, path: str) -> None:
    bodies = [b"[" * 100_000, b'{"a":' * 50_000, b"[" * 200 + b"]" * 200, json.dumps(_nested_string_value())]
    for body in bodies:
        reply = httpx.post(
            served.url + path, content=body, headers={"Content-Type": "application/json"}, timeout=60
        )
        assert reply.status_code == 400, (reply.status_code, reply.text[:200])
        assert reply.json() == {"error": "the document nests deeper than 128 levels"}
    assert "Traceback" not in _stopped_stderr(served)


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x"]
)
def test_only_json_is_read(served: Served, content_type: str | None) -> None:
    body = json.dumps(encode_trace(pipelines.run("loop", seed=5))).encode()
    headers = {"Content-Type": content_type} if content_type else {}
    reply = httpx.post(f"{served.url}/ingest/traces", content=body, headers=headers, timeout=60)
    assert reply.status_code == 415
    shown = repr(content_type) if content_type else "missing"
    assert reply.json() == {"error": f"Content-Type must be application/json (it is {shown})"}
    assert not served.store.exists() or not list(served.store.iterdir())  # nothing written
    charset = httpx.post(
        f"{served.url}/ingest/traces", content=body,
        headers={"Content-Type": "Application/JSON; charset=utf-8"}, timeout=60,
    )
    assert charset.status_code == 200 and charset.json()["count"] == 1


def test_what_a_web_page_sends_is_refused(served: Served) -> None:
    """DNS rebinding (a foreign Host) and cross-site requests (a foreign Origin) get 403 before
    anything is read or written; a local program's request, and a page on this machine, pass."""
    body = json.dumps(encode_trace(pipelines.run("loop", seed=6))).encode()
    as_json = {"Content-Type": "application/json"}
    _, port = _address(served)
    for headers in (
        {"Host": "evil.example"},
        {"Host": f"evil.example:{port}"},
        {"Host": f"127.0.0.1.evil.example:{port}"},
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": f"http://evil.example:{port}"},
    ):
        health = httpx.get(f"{served.url}/health", headers=headers)
        posted = httpx.post(f"{served.url}/ingest/traces", content=body, headers={**as_json, **headers})
        assert (health.status_code, posted.status_code) == (403, 403), headers
        assert "is not this machine" in posted.json()["error"]
    assert not served.store.exists() or not list(served.store.iterdir())
    assert httpx.get(f"{served.url}/health", headers={"Host": f"localhost:{port}"}).status_code == 200
    local_page = {**as_json, "Origin": "http://localhost:3000"}
    assert httpx.post(f"{served.url}/ingest/traces", content=body, headers=local_page).status_code == 200


def test_a_client_gone_mid_body_leaves_no_traceback(served: Served) -> None:
    for _ in range(5):
        with socket.create_connection(_address(served), timeout=10) as conn:
            conn.sendall(
                b"POST /ingest/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 1000\r\n\r\n{\"resourceSpans\": ["
            )
    assert httpx.get(f"{served.url}/health").status_code == 200
    assert "Traceback" not in _stopped_stderr(served)


def test_ctrl_c_drains_the_server_and_closes_its_socket(served: Served) -> None:
    assert httpx.get(f"{served.url}/health").status_code == 200
    served.process.send_signal(signal.SIGINT)
    out, err = served.process.communicate(timeout=30)
    assert served.process.returncode == 0, err
    assert out == "interrupted\nsocket closed: True\n"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{served.url}/health", timeout=5)
