"""@monitor through the public API: nesting (sync, async, threads), generators, errors, inputs."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from pydantic import BaseModel

from proveai import Trace, monitor, trace
from proveai.capture.monitor import current_span
from proveai.traces.jsonsafe import VALUE_BOUND
from tests.proveai.capture.monitor_kit import leaf


@monitor("middle", parent_agent="root", model="gpt-4o-mini", version="v2")
def middle(x: str) -> str:
    return leaf(x) + leaf(x + "!")


@monitor("root", kind="CHAIN", description="entry point")
def root(x: str) -> str:
    return middle(x)


def by_name(t: Trace) -> dict[str, list]:
    out: dict[str, list] = {}
    for span in t.spans:
        out.setdefault(span.name, []).append(span)
    return out


def test_outside_a_trace_it_is_the_plain_call():
    assert root("a") == "AA!"
    assert current_span() is None
    assert root.__name__ == "root" and root.__wrapped__ is not None


def test_sync_nesting_and_recorded_fields():
    with trace("svc") as t:
        assert root("ab") == "ABAB!"
    spans = by_name(t)
    (r,), (m,), leaves = spans["root"], spans["middle"], spans["leaf"]
    assert r.parent_span_id is None and m.parent_span_id == r.span_id
    assert [s.parent_span_id for s in leaves] == [m.span_id, m.span_id]
    assert t.children(m) == leaves and t.roots() == [r]
    assert [s.name for s in t.spans] == ["root", "middle", "leaf", "leaf"]  # start order
    assert m.inputs == {"x": "ab"} and m.output == "ABAB!"
    assert (m.model, m.version, m.parent_agent) == ("gpt-4o-mini", "v2", "root")
    assert (m.kind, m.operation) == ("UNKNOWN", "invoke_agent")
    assert r.description == "entry point" and r.kind == "CHAIN"
    assert leaves[0].kind == "TOOL" and leaves[0].operation == "execute_tool"
    assert all(len(s.trace_id) == 32 and s.trace_id == t.trace_id for s in t.spans)
    assert all(len(s.span_id) == 16 for s in t.spans)
    assert len({s.span_id for s in t.spans}) == 4
    assert r.start_ns <= m.start_ns <= leaves[0].start_ns <= leaves[0].end_ns <= m.end_ns <= r.end_ns
    assert r.duration_ms >= 0
    assert m.source_file == "tests/proveai/capture/test_monitor.py"
    assert t.agents == ["root", "middle", "leaf"]
    assert t.span("leaf") is leaves[0] and t.span("nope") is None


def test_exceptions_are_recorded_then_reraised():
    @monitor("boom")
    def boom(n: int) -> int:
        raise KeyError(f"missing {n}")

    @monitor("caller")
    def caller() -> int:
        try:
            return boom(3)
        except KeyError:
            return -1

    with trace() as t:
        assert caller() == -1
        with pytest.raises(KeyError):
            boom(4)
    spans = t.spans_named("boom")
    assert [s.status for s in spans] == ["error", "error"]
    assert spans[0].error == "KeyError: 'missing 3'" and spans[0].parent_span_id == t.span("caller").span_id
    assert spans[1].parent_span_id is None
    assert t.span("caller").status == "ok" and t.span("caller").output == -1


def test_async_tasks_keep_their_own_parents():
    @monitor("fetch")
    async def fetch(i: int) -> int:
        await asyncio.sleep(0.01 * (3 - i))  # finish in reverse order: interleaved for real
        return len(leaf(str(i)))

    @monitor("fan_out")
    async def fan_out() -> list[int]:
        return list(await asyncio.gather(*(fetch(i) for i in range(3))))

    with trace() as t:
        assert asyncio.run(fan_out()) == [1, 1, 1]
    fan = t.span("fan_out")
    fetches = t.spans_named("fetch")
    assert len(fetches) == 3 and all(f.parent_span_id == fan.span_id for f in fetches)
    for f in fetches:
        (child,) = t.children(f)
        assert child.name == "leaf" and child.inputs == {"x": str(f.inputs["i"])}


def test_threads_with_copied_context_keep_parents_plain_threads_are_not_captured():
    @monitor("worker")
    def worker(i: int) -> str:
        return leaf(f"w{i}")

    @monitor("parent")
    def parent() -> None:
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(worker, i)) for i in range(4)
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        plain = threading.Thread(target=worker, args=(99,))
        plain.start()
        plain.join()
        with ThreadPoolExecutor(2) as pool:
            # copy_context() runs here, in the traced thread, once per task
            futures = [pool.submit(contextvars.copy_context().run, worker, i) for i in (10, 11)]
            [f.result() for f in futures]

    with trace() as t:
        parent()
    p = t.span("parent")
    workers = t.spans_named("worker")
    # the plain threading.Thread (99) starts with an empty context: not captured
    assert sorted(w.inputs["i"] for w in workers) == [0, 1, 2, 3, 10, 11]
    assert all(w.parent_span_id == p.span_id for w in workers)
    for w in workers:
        assert [c.name for c in t.children(w)] == ["leaf"]


def test_generators_span_the_iteration_and_parent_inner_calls():
    @monitor("stream")
    def stream(n: int):
        for i in range(n):
            yield leaf(str(i))

    @monitor("astream")
    async def astream(n: int):
        for i in range(n):
            await asyncio.sleep(0)
            yield leaf(f"a{i}")

    async def consume():
        return [x async for x in astream(2)]

    with trace() as t:
        gen = stream(3)
        first = next(gen)
        leaf("between")  # consumer code between items is not inside the generator's span
        rest = list(gen)
        assert asyncio.run(consume()) == ["A0", "A1"]
    assert [first, *rest] == ["0", "1", "2"]
    s = t.span("stream")
    assert s.output == ["0", "1", "2"] and s.status == "ok"
    assert [c.inputs["x"] for c in t.children(s)] == ["0", "1", "2"]
    between = next(x for x in t.spans_named("leaf") if x.inputs == {"x": "between"})
    assert between.parent_span_id is None
    a = t.span("astream")
    assert a.output == ["A0", "A1"] and [c.inputs["x"] for c in t.children(a)] == ["a0", "a1"]
    assert s.end_ns >= max(c.end_ns for c in t.children(s))


def test_generator_closed_early_and_raising():
    @monitor("g")
    def g():
        yield 1
        yield 2
        raise ValueError("bad third")

    with trace() as t:
        early = g()
        next(early)
        early.close()
        with pytest.raises(ValueError):
            list(g())
    closed, failed = t.spans_named("g")
    assert closed.status == "ok" and closed.output == [1]
    assert failed.status == "error" and failed.error == "ValueError: bad third" and failed.output is None


def test_invalid_kind_and_operation_fail_at_decoration():
    with pytest.raises(ValueError, match="valid kinds: CHAIN, AGENT, TOOL, LLM, CHAT_MODEL"):
        monitor("x", kind="chat_model")
    with pytest.raises(ValueError, match="valid operations: invoke_agent, chat, execute_tool"):
        monitor("x", operation="call")


@dataclasses.dataclass
class Ticket:
    id: int
    tags: tuple[str, ...]


class Draft(BaseModel):
    text: str
    score: float


def test_arguments_serialise_by_the_documented_conventions():
    @monitor("many")
    def many(a, b, *rest, flag=False, **extra):
        return {"ok": True, 1: {2, 3}} if flag else Draft(text="t", score=0.5)

    huge = "x" * (VALUE_BOUND + 10)
    with trace() as t:
        many(Ticket(1, ("a", "b")), [1.5, None, float("nan")], b"raw", object, flag=True, k=huge)
        many("s", Draft(text="d", score=1.0))
    first, second = t.spans_named("many")
    assert first.inputs["a"] == {"id": 1, "tags": ["a", "b"]}
    assert first.inputs["b"] == [1.5, None, "nan"]
    assert first.inputs["rest"] == ["b'raw'", "<class 'object'>"]
    assert first.inputs["flag"] is True
    assert first.inputs["extra"]["k"].startswith("x" * VALUE_BOUND)
    assert first.inputs["extra"]["k"].endswith("…[proveai: truncated 10 chars]")
    assert first.output == {"ok": True, "1": [2, 3]}
    assert second.inputs == {
        "a": "s", "b": {"text": "d", "score": 1.0}, "rest": [], "flag": False, "extra": {}
    }
    assert second.output == {"text": "t", "score": 0.5}


def test_inputs_are_copied_at_call_time():
    @monitor("mutates")
    def mutates(items: list) -> int:
        return len(items)

    items = [1]
    with trace() as t:
        mutates(items)
        items.append(2)
    assert t.span("mutates").inputs == {"items": [1]}


def test_provider_hook_records_llm_call_on_the_open_span():
    @monitor("agent", model="gpt-4o-mini")
    def agent(q: str) -> str:
        span = current_span()
        assert span is not None and span.name == "agent"
        span.record_llm_call(
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": q}],
            "short answer", "gpt-4o-mini", {"input_tokens": 7, "output_tokens": 2}, {"temperature": 0.0},
        )
        span.record_llm_call([{"role": "user", "content": "again"}], "final", None, {"input_tokens": 1}, {})
        return "final"

    with trace() as t:
        agent("hi")
    s = t.span("agent")
    assert s.input_messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert s.output_messages == [{"role": "assistant", "content": "final"}]
    assert s.usage == {"input_tokens": 8, "output_tokens": 2}
    assert s.request == {"model": "gpt-4o-mini"}
    assert s.prompt == "Be brief."


def test_async_errors_async_with_and_async_generator_closed_early():
    @monitor("afail")
    async def afail() -> None:
        await asyncio.sleep(0)
        raise TimeoutError("model too slow")

    @monitor("agen")
    async def agen():
        for i in range(5):
            yield i

    async def main() -> Trace:
        async with trace("async") as t:
            with pytest.raises(TimeoutError):
                await afail()
            stream = agen()
            assert [await stream.__anext__(), await stream.__anext__()] == [0, 1]
            await stream.aclose()
        return t

    t = asyncio.run(main())
    failed, partial = t.span("afail"), t.span("agen")
    assert failed.status == "error" and failed.error == "TimeoutError: model too slow"
    assert partial.status == "ok" and partial.output == [0, 1]
