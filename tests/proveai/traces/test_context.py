"""traces/context.py: the one context variable capture hangs on. `current_span` is the span of
the monitored call running in this context (what providers record LLM calls on), never the
trace itself, and None outside any; asyncio tasks and threads keep their own."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

from proveai import dispatch, mock, monitor, trace
from proveai.traces.context import FRAME, current_span


def test_outside_a_trace_there_is_no_frame_and_no_span() -> None:
    assert FRAME.get() is None
    assert current_span() is None


def test_the_span_is_the_open_monitored_call_never_the_trace() -> None:
    seen: dict[str, Any] = {}

    @monitor("inner")
    def inner() -> str:
        seen["inner"] = current_span()
        return "x"

    @monitor("outer")
    def outer() -> str:
        seen["outer before"] = current_span()
        inner()
        seen["outer after"] = current_span()
        return "y"

    with trace("pipeline", exporters=[]) as t:
        assert FRAME.get() is t and current_span() is None  # at the trace's top level: no span
        outer()
        assert current_span() is None
    assert current_span() is None and FRAME.get() is None
    assert seen["inner"].name == "inner" and seen["outer before"].name == "outer"
    assert seen["outer after"] is seen["outer before"]  # back to the caller's span
    assert seen["inner"].parent_span_id == seen["outer before"].span_id
    assert {s.name for s in t.spans} == {"outer", "inner"}


def test_a_provider_records_its_call_on_the_span_current_span_returns() -> None:
    messages = [{"role": "user", "content": "hi"}]

    @monitor("drafter", model="gpt-4o-mini")
    def drafter() -> str:
        return dispatch("gpt-4o-mini").call(messages, "gpt-4o-mini").text

    with mock.responses(["hello"], repeat=True):
        dispatch("gpt-4o-mini").call(messages, "gpt-4o-mini")  # outside a trace: recorded nowhere
        with trace("pipeline", exporters=[]) as t:
            drafter()
    (span,) = t.spans
    assert span.input_messages == messages
    assert span.output_messages == [{"role": "assistant", "content": "hello"}]


def test_asyncio_tasks_and_threads_keep_their_own_frame() -> None:
    async def agent(name: str, gate: asyncio.Event, seen: dict[str, Any]) -> None:
        @monitor(name)
        async def body() -> None:
            await gate.wait()  # both spans are open at once, on one thread
            seen[name] = current_span().name

        await body()

    async def both() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        gate = asyncio.Event()
        with trace("fan-out", exporters=[]):
            tasks = [asyncio.create_task(agent(n, gate, seen)) for n in ("left", "right")]
            await asyncio.sleep(0)
            gate.set()
            await asyncio.gather(*tasks)
        return seen

    assert asyncio.run(both()) == {"left": "left", "right": "right"}

    outside: list[Any] = []
    copied: list[Any] = []

    @monitor("caller")
    def caller() -> None:
        plain = threading.Thread(target=lambda: outside.append(current_span()))
        context = contextvars.copy_context()
        carried = threading.Thread(target=lambda: copied.append(context.run(current_span)))
        for thread in (plain, carried):
            thread.start()
            thread.join()

    with trace("threads", exporters=[]):
        caller()
    assert outside == [None]  # a new thread starts with no frame
    assert copied[0].name == "caller"  # a copied context carries the span
