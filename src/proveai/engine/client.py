"""ProveAI: the client of the detection engine (`proveai engine serve` or any compatible one).

HTTP goes through httpx; the stream through httpx-sse (the `engine` extra). Connection
failures and 502/503/504 replies are retried (`retries`, exponential `backoff`); what still
fails raises ProveAIError with one sentence and a next step, never an httpx traceback.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from proveai.capture.trace import LiveTrace
from proveai.engine.handlers import fire
from proveai.engine.model import AnalyzeResponse
from proveai.errors import ProveAIError
from proveai.traces.otlp import encode_trace
from proveai.traces.trace import Trace

RETRY_STATUSES = (502, 503, 504)
EventCallback = Callable[[str, dict[str, Any]], Any]


def _sse() -> Any:
    try:
        import httpx_sse  # httpx-sse: pulls in httpx (~120 ms), only when streaming
    except ImportError:
        raise ProveAIError(
            "ProveAI.analyze streams with httpx-sse, which is not installed",
            suggestions=("pip install 'poisson-prove[engine]'",),
        ) from None
    return httpx_sse


def otlp_document(trace: Trace) -> dict[str, Any]:
    """The OTLP JSON a FileExporter would write for `trace`, also while the trace is open.

    An open trace (analyze called inside `with trace(...)`) is sent with the spans finished
    so far; its checks run only when the block exits, so none are in the document.
    """
    if not isinstance(trace, Trace):
        raise ProveAIError(f"analyze needs a proveai Trace, not {type(trace).__name__}")
    if not isinstance(trace, LiveTrace) or trace.is_closed:
        return encode_trace(trace)
    now = time.time_ns()
    finished = [b.freeze(now) for b in list(trace._builders) if getattr(b, "end_ns", 0)]
    view = Trace.closed(
        trace_id=trace.trace_id, name=trace.name, service_name=trace.service_name, spans=finished,
        invocation=trace.invocation, started_ns=trace.started_ns, ended_ns=now, resource=trace.resource,
    )
    return encode_trace(view)


class ProveAI:
    """Client of the ProveAI detection engine.

    `ProveAI(endpoint="http://localhost:19000", run_id=..., customer_id=..., mas_name=...)`;
    the three identity fields travel as X-Prove-Run-Id / X-Prove-Customer-Id / X-Prove-Mas-Name.
    `timeout` bounds one analysis (seconds), `connect_timeout` one connection attempt.
    """

    def __init__(
        self,
        endpoint: str,
        run_id: str,
        customer_id: str,
        mas_name: str,
        timeout: float = 300.0,
        *,
        connect_timeout: float = 5.0,
        retries: int = 2,
        backoff: float = 0.25,
    ) -> None:
        if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
            raise ProveAIError(
                f"endpoint must be an http(s) URL such as http://localhost:19000, not {endpoint!r}"
            )
        self.endpoint = endpoint.rstrip("/")
        self.run_id, self.customer_id, self.mas_name = run_id, customer_id, mas_name
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)

    def __repr__(self) -> str:
        return f"ProveAI({self.endpoint!r}, mas_name={self.mas_name!r})"

    # ---- plumbing -----------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        return {
            "Content-Type": "application/json", "X-Prove-Run-Id": str(self.run_id),
            "X-Prove-Customer-Id": str(self.customer_id), "X-Prove-Mas-Name": str(self.mas_name),
        }

    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout, connect=self.connect_timeout)

    def _unreachable(self, exc: Exception) -> ProveAIError:
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
            return ProveAIError(
                f"the ProveAI engine at {self.endpoint} did not answer within {self.timeout:g}s",
                suggestions=("raise ProveAI(..., timeout=SECONDS) or check the engine's load",),
            )
        reason = str(exc) or type(exc).__name__
        return ProveAIError(
            f"cannot reach the ProveAI engine at {self.endpoint} "
            f"({reason}; tried {self.retries + 1} time(s))",
            suggestions=("start one: proveai engine serve  (port 19000; --port N for another)",),
        )

    def _refused(self, status: int, body: bytes) -> ProveAIError:
        try:
            detail = json.loads(body).get("error") or body.decode("utf-8", "replace")
        except (ValueError, AttributeError):
            detail = body.decode("utf-8", "replace")[:300]
        return ProveAIError(f"the ProveAI engine at {self.endpoint} answered {status}: {detail}")

    def _not_a_stream(self, exc: Exception) -> ProveAIError:
        return ProveAIError(f"the server at {self.endpoint} did not answer with an event stream: {exc}")

    def _pause(self, attempt: int) -> float:
        return self.backoff * (2**attempt)

    def _finish(self, trace: Trace, response: AnalyzeResponse) -> AnalyzeResponse:
        trace.result = response
        fire(response)
        return response

    @staticmethod
    def _parse(events: list[tuple[str, dict[str, Any]]]) -> AnalyzeResponse:
        stages = tuple(data for name, data in events if name != "result")
        for name, data in events:
            if name == "error":
                raise ProveAIError(f"the engine failed to analyze the trace: {data.get('error')}")
            if name == "result":
                return AnalyzeResponse.from_dict(data, stages)
        raise ProveAIError("the engine's stream ended without a result event")

    # ---- health -------------------------------------------------------------------------
    def health(self) -> bool:
        """True when the engine answers GET /health with 200 (never raises)."""
        try:
            with httpx.Client(timeout=httpx.Timeout(5.0, connect=self.connect_timeout)) as client:
                return client.get(f"{self.endpoint}/health").status_code == 200
        except httpx.HTTPError:
            return False

    async def health_async(self) -> bool:
        try:
            async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, connect=self.connect_timeout)) as client:
                return (await client.get(f"{self.endpoint}/health")).status_code == 200
        except httpx.HTTPError:
            return False

    # ---- analyze (SSE) ------------------------------------------------------------------
    def analyze(self, trace: Trace, on_event: EventCallback | None = None) -> AnalyzeResponse:
        """Stream `trace` to POST /ingest/traces/stream; the response is also set as trace.result.

        `on_event(name, data)` sees each event (received, stage..., result) as it arrives.
        """
        sse = _sse()
        payload = otlp_document(trace)
        url = f"{self.endpoint}/ingest/traces/stream"
        for attempt in range(self.retries + 1):
            events: list[tuple[str, dict[str, Any]]] = []
            try:
                with httpx.Client(timeout=self._timeout()) as client, sse.connect_sse(
                    client, "POST", url, json=payload, headers=self._headers()
                ) as source:
                    status = source.response.status_code
                    if status in RETRY_STATUSES and attempt < self.retries:
                        time.sleep(self._pause(attempt))
                        continue
                    if status != 200:
                        raise self._refused(status, source.response.read())
                    for event in source.iter_sse():
                        data = event.json() if event.data else {}
                        events.append((event.event, data))
                        if on_event is not None:
                            on_event(event.event, data)
                return self._finish(trace, self._parse(events))
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt < self.retries:
                    time.sleep(self._pause(attempt))
                    continue
                raise self._unreachable(exc) from None
            except httpx.HTTPError as exc:
                raise self._unreachable(exc) from None
            except sse.SSEError as exc:
                raise self._not_a_stream(exc) from None
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def analyze_async(self, trace: Trace, on_event: EventCallback | None = None) -> AnalyzeResponse:
        """analyze() for asyncio code."""
        sse = _sse()
        payload = otlp_document(trace)
        url = f"{self.endpoint}/ingest/traces/stream"
        for attempt in range(self.retries + 1):
            events: list[tuple[str, dict[str, Any]]] = []
            try:
                async with httpx.AsyncClient(timeout=self._timeout()) as client, sse.aconnect_sse(
                    client, "POST", url, json=payload, headers=self._headers()
                ) as source:
                    status = source.response.status_code
                    if status in RETRY_STATUSES and attempt < self.retries:
                        await asyncio.sleep(self._pause(attempt))
                        continue
                    if status != 200:
                        raise self._refused(status, await source.response.aread())
                    async for event in source.aiter_sse():
                        data = event.json() if event.data else {}
                        events.append((event.event, data))
                        if on_event is not None:
                            on_event(event.event, data)
                return self._finish(trace, self._parse(events))
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt < self.retries:
                    await asyncio.sleep(self._pause(attempt))
                    continue
                raise self._unreachable(exc) from None
            except httpx.HTTPError as exc:
                raise self._unreachable(exc) from None
            except sse.SSEError as exc:
                raise self._not_a_stream(exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    # ---- batch --------------------------------------------------------------------------
    def _batch_payload(self, traces: Sequence[Trace]) -> dict[str, Any]:
        if not traces:
            raise ProveAIError("analyze_batch needs at least one trace")
        merged: dict[str, Any] = {"resourceSpans": []}
        unique = {trace.trace_id: trace for trace in traces}  # the same trace twice is sent once
        for trace in unique.values():
            merged["resourceSpans"].extend(otlp_document(trace).get("resourceSpans", []))
        return merged

    def _batch_results(self, traces: Sequence[Trace], response: httpx.Response) -> list[AnalyzeResponse]:
        if response.status_code != 200:
            raise self._refused(response.status_code, response.content)
        by_id = {r["trace_id"]: AnalyzeResponse.from_dict(r) for r in response.json().get("results", [])}
        results = []
        for trace in traces:
            result = by_id.get(trace.trace_id)
            if result is None:
                raise ProveAIError(f"the engine returned no result for trace {trace.trace_id}")
            results.append(self._finish(trace, result))
        return results

    def analyze_batch(self, traces: Sequence[Trace]) -> list[AnalyzeResponse]:
        """POST several traces to /ingest/traces (no stream); one response per trace, in order."""
        payload = self._batch_payload(traces)
        for attempt in range(self.retries + 1):
            try:
                with httpx.Client(timeout=self._timeout()) as client:
                    response = client.post(
                        f"{self.endpoint}/ingest/traces", json=payload, headers=self._headers()
                    )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt < self.retries:
                    time.sleep(self._pause(attempt))
                    continue
                raise self._unreachable(exc) from None
            except httpx.HTTPError as exc:
                raise self._unreachable(exc) from None
            if response.status_code in RETRY_STATUSES and attempt < self.retries:
                time.sleep(self._pause(attempt))
                continue
            return self._batch_results(traces, response)
        raise AssertionError("unreachable")  # pragma: no cover

    async def analyze_batch_async(self, traces: Sequence[Trace]) -> list[AnalyzeResponse]:
        payload = self._batch_payload(traces)
        for attempt in range(self.retries + 1):
            try:
                async with httpx.AsyncClient(timeout=self._timeout()) as client:
                    response = await client.post(
                        f"{self.endpoint}/ingest/traces", json=payload, headers=self._headers()
                    )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt < self.retries:
                    await asyncio.sleep(self._pause(attempt))
                    continue
                raise self._unreachable(exc) from None
            except httpx.HTTPError as exc:
                raise self._unreachable(exc) from None
            if response.status_code in RETRY_STATUSES and attempt < self.retries:
                await asyncio.sleep(self._pause(attempt))
                continue
            return self._batch_results(traces, response)
        raise AssertionError("unreachable")  # pragma: no cover
