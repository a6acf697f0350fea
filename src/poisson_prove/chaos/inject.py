"""The transport patches: httpx (sync and async) and requests, active inside `chaos_scope` only.

The patches are installed when the first episode with faults starts in a process and removed
when the last one ends; outside a scope (another thread, the sweep itself) a patched method
calls straight through. A faulted call never reaches the server, except `malformed_body`, whose
real response has its body cut and spoilt. Every injected fault is appended to the episode's
spans as `{name: "chaos <fault>", source: "chaos", status: "error" (or "ok" for latency),
attributes: {chaos.fault, chaos.kind, chaos.call, chaos.client, http.request.method,
server.address, url.path, ...}}`, so `inspect --episode` and any report reading the spans column
show which call was hit by which fault. aiohttp is not patched.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from poisson_prove.chaos.decide import CallFaults, EpisodeChaos
from poisson_prove.episode.recording import _PARENT, current_spans

_STATE: ContextVar[EpisodeChaos | None] = ContextVar("poisson_prove_chaos", default=None)
_LOCK = threading.Lock()
_ACTIVE = 0
_ORIGINALS: list[tuple[Any, str, Any]] = []  # (class, attribute, original function)
INJECTED = "injected by poisson-prove [chaos]"
CLIENTS = ("httpx", "httpx (async)", "requests")
MALFORMED_TAIL = b'\x00<<' + b"malformed body " + INJECTED.encode() + b">>"


@dataclass(frozen=True)
class ChaosScope:
    """What a worker needs to decide faults (the faults, the chaos seed, the run's salt), entered
    around each rollout call as the episode's scope (`episode.run.Job.scope`). Picklable, so a
    remote worker decides the same faults on the same calls."""

    chaos: Mapping[str, Any]

    def __call__(self, cfg: Mapping[str, Any], seed: int) -> AbstractContextManager[None]:
        return chaos_scope(self.chaos, cfg, seed)


@contextmanager
def chaos_scope(chaos: Mapping[str, Any] | None, cfg: Mapping[str, Any], seed: int) -> Iterator[None]:
    """Inject `chaos`'s faults into the HTTP calls made in this context (a no-op without faults)."""
    if not chaos or not chaos.get("faults"):
        yield
        return
    _acquire()
    token = _STATE.set(EpisodeChaos(chaos, cfg, seed))
    try:
        yield
    finally:
        _STATE.reset(token)
        _release()


def _acquire() -> None:
    global _ACTIVE
    with _LOCK:
        if _ACTIVE == 0:
            _install()
        _ACTIVE += 1


def _release() -> None:
    global _ACTIVE
    with _LOCK:
        _ACTIVE -= 1
        if _ACTIVE == 0:
            for owner, attribute, original in reversed(_ORIGINALS):
                setattr(owner, attribute, original)
            _ORIGINALS.clear()


def _patch(owner: Any, attribute: str, make: Any) -> None:
    original = getattr(owner, attribute)
    _ORIGINALS.append((owner, attribute, original))
    setattr(owner, attribute, make(original))


def _install() -> None:
    try:
        import httpx  # httpx: ~120 ms, patched only when the target uses it
    except ImportError:
        pass
    else:
        _patch(httpx.HTTPTransport, "handle_request", _httpx_sync)
        _patch(httpx.AsyncHTTPTransport, "handle_async_request", _httpx_async)
    try:
        from requests.adapters import HTTPAdapter  # requests: patched only when the target uses it
    except ImportError:
        pass
    else:
        _patch(HTTPAdapter, "send", _requests_send)


def _record(call: CallFaults, fault: Mapping[str, Any], client: str, method: str, host: str, path: str,
            start: float) -> None:
    spans = current_spans()
    if spans is None:
        return
    attributes: dict[str, Any] = {
        "chaos.fault": fault["name"],
        "chaos.kind": fault["kind"],
        "chaos.call": call.index,
        "chaos.client": client,
        "http.request.method": method,
        "server.address": host,
        "url.path": path,  # the path only: a query string may carry content
    }
    if "status" in fault:
        attributes["http.response.status_code"] = fault["status"]
    if "seconds" in fault:
        attributes["chaos.seconds"] = fault["seconds"]
    spans.append(
        {
            "name": f"chaos {fault['name']}",
            "start": start,
            "end": time.time(),
            "attributes": attributes,
            "status": "ok" if fault["kind"] == "latency" else "error",
            "source": "chaos",
            "parent": _PARENT.get(),
            **({} if fault["kind"] == "latency" else {"error": f"{fault['kind']} {INJECTED}"}),
        }
    )


def _error_body(fault: Mapping[str, Any]) -> bytes:
    message = f"HTTP {fault['status']} {INJECTED} (fault {fault['name']})"
    error = {"message": message, "type": "prove_chaos", "code": fault["status"]}
    return json.dumps({"error": error}).encode()


def _malformed(body: bytes) -> bytes:
    return body[: len(body) // 2] + MALFORMED_TAIL


def _body_headers(headers: Any) -> list[tuple[str, str]]:
    drop = {"content-length", "content-encoding", "transfer-encoding"}
    return [(k, v) for k, v in headers.items() if k.lower() not in drop]


def _spoilt(response: Any, body: bytes, request: Any) -> Any:
    import httpx  # httpx: ~120 ms, patched only when the target uses it

    headers = _body_headers(response.headers)
    return httpx.Response(response.status_code, headers=headers, content=_malformed(body), request=request)


# httpx -------------------------------------------------------------------------------------


def _httpx_fault(fault: Mapping[str, Any], request: Any) -> Any:
    import httpx  # httpx: ~120 ms, patched only when the target uses it

    kind = fault["kind"]
    if kind == "http_status":
        headers = {"content-type": "application/json", "x-prove-chaos": fault["name"]}
        return httpx.Response(fault["status"], headers=headers, content=_error_body(fault), request=request)
    if kind == "timeout":
        raise httpx.ReadTimeout(f"timed out ({INJECTED})", request=request)
    if kind == "connection_reset":
        raise httpx.ReadError(f"[Errno 104] Connection reset by peer ({INJECTED})", request=request)
    raise httpx.ConnectError(f"[Errno 111] Connection refused ({INJECTED})", request=request)


def _httpx_sync(original: Any) -> Any:
    def handle_request(self: Any, request: Any) -> Any:
        state = _STATE.get()
        if state is None:
            return original(self, request)
        host, path, start = request.url.host, request.url.path, time.time()
        call = state.next_call(host, path)
        for delayed in call.delayed_by:
            _record(call, delayed, "httpx", request.method, host, path, start)
        if call.delay:
            time.sleep(call.delay)
        fault = call.terminal
        if fault is None:
            return original(self, request)
        if fault["kind"] == "timeout":
            time.sleep(fault.get("seconds", 0.0))
        _record(call, fault, "httpx", request.method, host, path, start)
        if fault["kind"] != "malformed_body":
            return _httpx_fault(fault, request)
        response = original(self, request)
        try:
            body = response.read()
        finally:
            response.close()
        return _spoilt(response, body, request)

    return handle_request


def _httpx_async(original: Any) -> Any:
    async def handle_async_request(self: Any, request: Any) -> Any:
        state = _STATE.get()
        if state is None:
            return await original(self, request)
        host, path, start = request.url.host, request.url.path, time.time()
        call = state.next_call(host, path)
        for delayed in call.delayed_by:
            _record(call, delayed, "httpx", request.method, host, path, start)
        if call.delay:
            await asyncio.sleep(call.delay)
        fault = call.terminal
        if fault is None:
            return await original(self, request)
        if fault["kind"] == "timeout":
            await asyncio.sleep(fault.get("seconds", 0.0))
        _record(call, fault, "httpx", request.method, host, path, start)
        if fault["kind"] != "malformed_body":
            return _httpx_fault(fault, request)
        response = await original(self, request)
        try:
            body = await response.aread()
        finally:
            await response.aclose()
        return _spoilt(response, body, request)

    return handle_async_request


# requests ----------------------------------------------------------------------------------


def _requests_fault(adapter: Any, fault: Mapping[str, Any], request: Any) -> Any:
    import requests  # requests: patched only when the target uses it
    from requests.structures import CaseInsensitiveDict  # requests: patched only when the target uses it

    kind = fault["kind"]
    if kind == "http_status":
        response = requests.Response()
        response.status_code = fault["status"]
        response._content = _error_body(fault)
        response.headers = CaseInsensitiveDict(
            {"Content-Type": "application/json", "X-Prove-Chaos": fault["name"]}
        )
        response.url = request.url
        response.request = request
        try:
            response.reason = HTTPStatus(fault["status"]).phrase
        except ValueError:
            response.reason = "Injected Error"
        response.encoding = "utf-8"
        response.connection = adapter
        return response
    if kind == "timeout":
        raise requests.exceptions.ReadTimeout(f"Read timed out ({INJECTED})", request=request)
    if kind == "connection_reset":
        reset = ConnectionResetError(104, f"Connection reset by peer ({INJECTED})")
        raise requests.exceptions.ConnectionError(("Connection aborted.", reset), request=request)
    refused = ConnectionRefusedError(111, f"Connection refused ({INJECTED})")
    raise requests.exceptions.ConnectionError(refused, request=request)


def _requests_send(original: Any) -> Any:
    def send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        state = _STATE.get()
        if state is None:
            return original(self, request, *args, **kwargs)
        parts = urlsplit(request.url)
        host, path, start = parts.hostname or "", parts.path or "/", time.time()
        call = state.next_call(host, path)
        for delayed in call.delayed_by:
            _record(call, delayed, "requests", str(request.method), host, path, start)
        if call.delay:
            time.sleep(call.delay)
        fault = call.terminal
        if fault is None:
            return original(self, request, *args, **kwargs)
        if fault["kind"] == "timeout":
            time.sleep(fault.get("seconds", 0.0))
        _record(call, fault, "requests", str(request.method), host, path, start)
        if fault["kind"] != "malformed_body":
            return _requests_fault(self, fault, request)
        response = original(self, request, *args, **kwargs)
        response._content = _malformed(response.content)
        response.headers.pop("Content-Length", None)
        response.headers.pop("Content-Encoding", None)
        return response

    return send
