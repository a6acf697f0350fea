"""What the engine accepts at /ingest: bad bodies refused with a reason, several traces only in batch."""

from __future__ import annotations

import httpx

from proveai.traces.otlp import encode_trace
from tests.proveai.engine import pipelines


def test_bad_bodies_are_refused_with_a_reason(engine):
    for body, reason in [
        (b"", "empty body"),
        (b"{not json", "not JSON"),
        (b'{"spans": []}', "no resourceSpans"),
        (b'{"resourceSpans": []}', "no spans"),
    ]:
        for path in ("/ingest/traces", "/ingest/traces/stream"):
            reply = httpx.post(engine.url + path, content=body)
            assert reply.status_code == 400 and reason in reply.json()["error"], (path, body, reply.text)
    two = encode_trace(pipelines.run("clean", seed=1))
    two["resourceSpans"] += encode_trace(pipelines.run("clean", seed=2))["resourceSpans"]
    reply = httpx.post(engine.url + "/ingest/traces/stream", json=two)
    assert reply.status_code == 400 and "POST several to /ingest/traces" in reply.json()["error"]
    assert httpx.post(engine.url + "/ingest/traces", json=two).json()["count"] == 2
