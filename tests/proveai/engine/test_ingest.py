"""What the engine accepts at /ingest: bad bodies refused with a reason and their status, several
traces only in batch, nesting counted without recursion."""

from __future__ import annotations

import httpx
import pytest

from proveai.engine.ingest import MAX_NESTING, Refused, check_content_type, nesting_depth, split_traces
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
            reply = httpx.post(engine.url + path, content=body, headers={"Content-Type": "application/json"})
            assert reply.status_code == 400 and reason in reply.json()["error"], (path, body, reply.text)
    two = encode_trace(pipelines.run("clean", seed=1))
    two["resourceSpans"] += encode_trace(pipelines.run("clean", seed=2))["resourceSpans"]
    reply = httpx.post(engine.url + "/ingest/traces/stream", json=two)
    assert reply.status_code == 400 and "POST several to /ingest/traces" in reply.json()["error"]
    assert httpx.post(engine.url + "/ingest/traces", json=two).json()["count"] == 2


def test_nesting_is_counted_without_recursion() -> None:
    assert [nesting_depth(v) for v in (1, "x", [], {"a": [1, {"b": ()}]})] == [0, 0, 1, 4]
    deep: list = []
    for _ in range(100_000):  # far past the recursion limit: counting stops past the limit
        deep = [deep]
    assert nesting_depth(deep) == MAX_NESTING + 1


@pytest.mark.parametrize(
    "body", [b"[" * 100_000, b"[" * (MAX_NESTING + 1) + b"]" * (MAX_NESTING + 1), b'{"a":' * 50_000]
)
def test_a_document_nested_too_deep_is_refused_with_400(body: bytes) -> None:
    with pytest.raises(Refused) as refused:
        split_traces(body)
    assert (refused.value.status, refused.value.message) == (400, "the document nests deeper than 128 levels")


def test_only_json_content_types_pass() -> None:
    check_content_type("application/json")
    check_content_type("application/json; charset=utf-8")
    for other in (None, "", "text/plain", "application/jsonp", "application/x-www-form-urlencoded"):
        with pytest.raises(Refused) as refused:
            check_content_type(other)
        assert refused.value.status == 415
