"""The live trace: the open one in its context, closed and exported even when the pipeline raises."""

from __future__ import annotations

import pytest

from proveai import monitor, regex_match, trace
from tests.proveai.capture.monitor_kit import leaf


def test_an_exception_leaving_the_trace_still_closes_and_exports(tmp_path):
    from proveai import FileExporter, load_trace

    with pytest.raises(RuntimeError), trace("fails", exporters=[FileExporter(tmp_path)]) as t:
        leaf("x")
        raise RuntimeError("pipeline died")
    assert load_trace(tmp_path / f"{t.trace_id}.json").span("leaf").output == "X"


def test_current_trace_is_the_open_one_in_this_context() -> None:
    from proveai.capture.trace import current_trace

    seen: list = []

    @monitor("probe")
    def probe() -> None:
        seen.append(current_trace())

    assert current_trace() is None
    with trace("outer") as outer:
        probe()  # inside a span, the trace that owns it
        with trace("inner") as inner:
            probe()
            leaf("in")
        assert current_trace() is outer  # the inner one closed: back to the outer
    assert current_trace() is None
    assert seen == [outer, inner]
    assert [s.name for s in inner.spans] == ["probe", "leaf"] and [s.name for s in outer.spans] == ["probe"]


def test_a_closed_trace_is_a_record_that_cannot_be_entered_again() -> None:
    with trace("once") as t:
        assert not t.is_closed
    assert t.is_closed and t.ended_ns >= t.started_ns > 0
    with pytest.raises(RuntimeError, match=r"this Trace is closed; open a new one with trace\(\.\.\.\)"), t:
        pass


def test_async_with_opens_and_closes_the_same_way() -> None:
    import asyncio

    from proveai.capture.trace import current_trace

    async def pipeline() -> tuple:
        async with trace("async-svc", checks=[regex_match("leaf", "^A$")]) as t:
            inside = current_trace()
            leaf("a")
        return t, inside

    t, inside = asyncio.run(pipeline())
    assert inside is t and t.is_closed and t.span("leaf").output == "A" and t.outcome == "good"
