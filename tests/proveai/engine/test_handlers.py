"""@on_detection handlers against a real engine: filtered by severity and confidence, a raising one logged."""

from __future__ import annotations

import logging

import pytest

from proveai import on_detection
from tests.proveai.engine import pipelines
from tests.proveai.engine.engine_kit import client


def test_handlers_are_filtered_by_severity_and_confidence_and_a_raising_one_is_logged(engine, caplog):
    paged: list[tuple[str, list[str]]] = []
    every: list[str] = []

    @on_detection(severity="critical", min_confidence=0.8)
    def page(response):
        paged.append((response.trace_id, [d.agent_name for d in response.diagnoses]))

    @on_detection
    def broken(response):
        raise RuntimeError("pager is down")

    @on_detection(severity="low")
    def record(response):
        every.append(response.trace_id)

    c = client(engine.url)
    loop, crash, clean = (pipelines.run(m, seed=5) for m in ("loop", "exception", "clean"))
    with caplog.at_level(logging.ERROR, logger="proveai.engine"):
        for t in (loop, crash, clean):
            c.analyze(t)
    # only the exception is critical; the handler sees only its critical diagnosis
    assert paged == [(crash.trace_id, ["researcher", "researcher"])]  # it raised in both passes
    assert every == [loop.trace_id, crash.trace_id]  # a clean trace fires nothing
    messages = [r.getMessage() for r in caplog.records if r.name == "proveai.engine"]
    assert len(messages) == 2 and all("broken raised RuntimeError: pager is down" in m for m in messages)
    assert all(r.exc_info is None for r in caplog.records if r.levelno >= logging.ERROR)


def test_on_detection_refuses_unknown_filters():
    with pytest.raises(ValueError, match="severity must be one of critical, high, medium, low"):
        on_detection(severity="urgent")
    with pytest.raises(ValueError, match="min_confidence"):
        on_detection(min_confidence=2)
