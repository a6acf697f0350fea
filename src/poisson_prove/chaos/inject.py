"""The transport patches: httpx and httpx2 (sync and async), requests and aiohttp, active
inside `chaos_scope` only.

The patches are installed when the first episode with faults starts in a process and removed
when the last one ends; outside a scope (another thread, the sweep itself) a patched method
calls straight through. Each of these clients that is installed is imported then (the first
episode with faults in a process pays for the imports), so a client the rollout imports late
is faulted from its first call. A faulted call never reaches the server, except
`malformed_body`, whose real response has its body cut and spoilt. Every injected fault is
appended to the episode's spans as `{name: "chaos <fault>", source: "chaos", status: "error"
(or "ok" for latency), attributes: {chaos.fault, chaos.kind, chaos.call, chaos.client,
http.request.method, server.address, url.path, ...}}`, so `inspect --episode` and any report
reading the spans column show which call was hit by which fault; when the episode ends, its
accounting entry (chaos.reach) counts the calls that went through these clients and those a
fault hit. httpx and httpx2 are patched at their transports (`handle_request`,
`handle_async_request`), requests at `HTTPAdapter.send`, aiohttp at `ClientSession._request`
(one call per request, its redirects included).
"""

from __future__ import annotations

import importlib
import inspect
import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from poisson_prove.chaos.decide import CallFaults, EpisodeChaos
from poisson_prove.chaos.reach import is_reach, reach_entry
from poisson_prove.episode.recording import _PARENT, current_spans

if TYPE_CHECKING:
    import asyncio

_STATE: ContextVar[EpisodeChaos | None] = ContextVar("poisson_prove_chaos", default=None)
_LOCK = threading.Lock()
_ACTIVE = 0
_ORIGINALS: list[tuple[Any, str, Any]] = []  # (class, attribute, original function)
INJECTED = "injected by poisson-prove [chaos]"
CLIENTS = ("httpx", "httpx (async)", "httpx2", "httpx2 (async)", "requests", "aiohttp")
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
    state = EpisodeChaos(chaos, cfg, seed)
    token = _STATE.set(state)
    start = time.time()
    try:
        yield
    finally:
        _STATE.reset(token)
        _release()
        _record_reach(state, start)


def _record_reach(state: EpisodeChaos, start: float) -> None:
    """End the episode's spans with what chaos reached. An episode replayed inside a second
    scope (an async rollout's row is built after its awaited call) keeps one entry: the
    second scope's calls, if any, are added to the first's."""
    spans = current_spans()
    if spans is None:
        return
    for index in range(len(spans) - 1, -1, -1):
        if is_reach(spans[index]):
            if state.calls:
                attributes = spans[index]["attributes"]
                attributes["chaos.calls"] += state.calls
                attributes["chaos.faulted"] += state.faulted
                for key, counts in (("chaos.clients", state.clients), ("chaos.hits", state.hits)):
                    for name, count in counts.items():
                        attributes[key][name] = attributes[key].get(name, 0) + count
                resend = getattr(spans, "resend", None)  # a child's streamed list sends it again
                if resend is not None:
                    resend(index)
            return
    spans.append(reach_entry(state.calls, state.faulted, state.clients, state.hits, start, time.time()))


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
    for name in ("httpx", "httpx2"):
        try:
            # httpx: ~120 ms, httpx2: ~350 ms; imported when installed, so a late import is faulted too
            module = importlib.import_module(name)
        except ImportError:
            continue
        _patch(module.HTTPTransport, "handle_request", lambda original, m=module: _httpx_sync(original, m))
        _patch(
            module.AsyncHTTPTransport,
            "handle_async_request",
            lambda original, m=module: _httpx_async(original, m),
        )
    try:
        from requests.adapters import HTTPAdapter  # requests: patched when installed
    except ImportError:
        pass
    else:
        _patch(HTTPAdapter, "send", _requests_send)
    try:
        import aiohttp  # aiohttp: ~300 ms, patched when installed
    except ImportError:
        pass
    else:
        _patch(aiohttp.ClientSession, "_request", _aiohttp_request)


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


def _spoilt(module: Any, response: Any, body: bytes, request: Any) -> Any:
    headers = _body_headers(response.headers)
    return module.Response(response.status_code, headers=headers, content=_malformed(body), request=request)


# httpx and httpx2 (one API) ---------------------------------------------------------------


def _httpx_fault(module: Any, fault: Mapping[str, Any], request: Any) -> Any:
    kind = fault["kind"]
    if kind == "http_status":
        headers = {"content-type": "application/json", "x-prove-chaos": fault["name"]}
        return module.Response(fault["status"], headers=headers, content=_error_body(fault), request=request)
    if kind == "timeout":
        raise module.ReadTimeout(f"timed out ({INJECTED})", request=request)
    if kind == "connection_reset":
        raise module.ReadError(f"[Errno 104] Connection reset by peer ({INJECTED})", request=request)
    raise module.ConnectError(f"[Errno 111] Connection refused ({INJECTED})", request=request)


def _httpx_sync(original: Any, module: Any) -> Any:
    client = module.__name__

    def handle_request(self: Any, request: Any) -> Any:
        state = _STATE.get()
        if state is None:
            return original(self, request)
        host, path, start = request.url.host, request.url.path, time.time()
        call = state.next_call(host, path, client)
        for delayed in call.delayed_by:
            _record(call, delayed, client, request.method, host, path, start)
        if call.delay:
            time.sleep(call.delay)
        fault = call.terminal
        if fault is None:
            return original(self, request)
        if fault["kind"] == "timeout":
            time.sleep(fault.get("seconds", 0.0))
        _record(call, fault, client, request.method, host, path, start)
        if fault["kind"] != "malformed_body":
            return _httpx_fault(module, fault, request)
        response = original(self, request)
        try:
            body = response.read()
        finally:
            response.close()
        return _spoilt(module, response, body, request)

    return handle_request


def _httpx_async(original: Any, module: Any) -> Any:
    client = module.__name__

    async def handle_async_request(self: Any, request: Any) -> Any:
        state = _STATE.get()
        if state is None:
            return await original(self, request)
        host, path, start = request.url.host, request.url.path, time.time()
        call = state.next_call(host, path, client)
        for delayed in call.delayed_by:
            _record(call, delayed, client, request.method, host, path, start)
        if call.delay:
            await _sleep(call.delay)
        fault = call.terminal
        if fault is None:
            return await original(self, request)
        if fault["kind"] == "timeout":
            await _sleep(fault.get("seconds", 0.0))
        _record(call, fault, client, request.method, host, path, start)
        if fault["kind"] != "malformed_body":
            return _httpx_fault(module, fault, request)
        response = await original(self, request)
        try:
            body = await response.aread()
        finally:
            await response.aclose()
        return _spoilt(module, response, body, request)

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
        call = state.next_call(host, path, "requests")
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


# aiohttp -----------------------------------------------------------------------------------


class _SentRequest:
    """What ClientResponse reads of a request already sent: no bytes went out."""

    output_size = 0


def _aiohttp_url(session: Any, str_or_url: Any) -> Any:
    from yarl import URL  # aiohttp's URL type: only when aiohttp is patched

    build = getattr(session, "_build_url", None)  # joins the session's base_url
    return build(str_or_url) if build is not None else URL(str_or_url)


async def _sleep(seconds: float) -> None:
    import asyncio  # loaded already: only a coroutine under a running loop sleeps (not at import: ~30 ms)

    await asyncio.sleep(seconds)


def _running_loop() -> asyncio.AbstractEventLoop:
    import asyncio  # loaded already: only called under a running loop

    return asyncio.get_running_loop()


def _aiohttp_stream(loop: asyncio.AbstractEventLoop, body: bytes) -> Any:
    from aiohttp.client_proto import ResponseHandler  # aiohttp: only when aiohttp is patched
    from aiohttp.streams import StreamReader  # aiohttp: only when aiohttp is patched

    stream = StreamReader(ResponseHandler(loop), 2**16, loop=loop)
    stream.feed_data(body)
    stream.feed_eof()
    return stream


def _aiohttp_response(session: Any, method: str, url: Any, fault: Mapping[str, Any]) -> Any:
    """A ClientResponse the server never sent: the fault's status and JSON error body."""
    import aiohttp  # aiohttp: only when aiohttp is patched
    from aiohttp.helpers import TimerNoop  # aiohttp: only when aiohttp is patched
    from multidict import CIMultiDict, CIMultiDictProxy  # aiohttp's header type: as above

    loop = _running_loop()
    body = _error_body(fault)
    headers = CIMultiDict(
        {"Content-Type": "application/json", "X-Prove-Chaos": fault["name"], "Content-Length": str(len(body))}
    )
    info = aiohttp.RequestInfo(url, method, CIMultiDictProxy(CIMultiDict()), url)
    response_class = getattr(session, "_response_class", aiohttp.ClientResponse)
    options: dict[str, Any] = {
        "writer": None,
        "continue100": None,
        "timer": TimerNoop(),
        "request_info": info,
        "traces": [],
        "loop": loop,
        "session": session,
    }
    if "stream_writer" in inspect.signature(response_class.__init__).parameters:
        options["stream_writer"] = _SentRequest()
    response = response_class(method, url, **options)
    response.version = aiohttp.HttpVersion11
    response.status = fault["status"]
    try:
        response.reason = HTTPStatus(fault["status"]).phrase
    except ValueError:
        response.reason = "Injected Error"
    response._headers = CIMultiDictProxy(headers)
    response._raw_headers = tuple((k.encode(), v.encode()) for k, v in headers.items())
    response.content = _aiohttp_stream(loop, body)
    return response


def _aiohttp_error(fault: Mapping[str, Any], url: Any) -> BaseException:
    import aiohttp  # aiohttp: only when aiohttp is patched

    kind = fault["kind"]
    if kind == "timeout":
        timeout = getattr(aiohttp, "SocketTimeoutError", aiohttp.ServerTimeoutError)
        return timeout(f"Timeout on reading data from socket ({INJECTED})")
    if kind == "connection_reset":
        return aiohttp.ClientOSError(104, f"Connection reset by peer ({INJECTED})")
    refused = ConnectionRefusedError(111, f"Connect call failed ({INJECTED})")
    try:
        from aiohttp.client_reqrep import ConnectionKey  # aiohttp: only when aiohttp is patched

        secure = url.scheme in ("https", "wss")
        given: dict[str, Any] = {"host": url.host or "", "port": url.port, "is_ssl": secure, "ssl": True}
        fields: dict[str, Any] = {name: given.get(name) for name in ConnectionKey._fields}
        key = ConnectionKey(**fields)
        return aiohttp.ClientConnectorError(key, refused)
    except Exception:  # another aiohttp's connection key: the base class, with the same words
        where = f"{url.host}:{url.port}"
        return aiohttp.ClientConnectionError(f"Cannot connect to host {where} [{refused.strerror}]")


def _aiohttp_spoil(response: Any, body: bytes) -> None:
    from multidict import CIMultiDict, CIMultiDictProxy  # aiohttp's header type: only when patched

    response._body = _malformed(body)
    response.content = _aiohttp_stream(_running_loop(), response._body)
    response._headers = CIMultiDictProxy(CIMultiDict(_body_headers(response.headers)))
    getattr(response, "_cache", {}).pop("headers", None)  # `headers` is cached once read


async def _aiohttp_raise_for_status(session: Any, response: Any, kwargs: Mapping[str, Any]) -> None:
    """What aiohttp does with a response's status after the call: the request's
    raise_for_status, else the session's."""
    check = kwargs.get("raise_for_status")
    if check is None:
        check = getattr(session, "_raise_for_status", None)
    if callable(check):
        await check(response)
    elif check:
        response.raise_for_status()


def _aiohttp_request(original: Any) -> Any:
    async def _request(self: Any, method: str, str_or_url: Any, *args: Any, **kwargs: Any) -> Any:
        state = _STATE.get()
        if state is None:
            return await original(self, method, str_or_url, *args, **kwargs)
        try:
            url = _aiohttp_url(self, str_or_url)
        except (TypeError, ValueError):  # aiohttp refuses it itself, before any connection
            return await original(self, method, str_or_url, *args, **kwargs)
        method = str(method).upper()
        host, path, start = url.host or "", url.path or "/", time.time()
        call = state.next_call(host, path, "aiohttp")
        for delayed in call.delayed_by:
            _record(call, delayed, "aiohttp", method, host, path, start)
        if call.delay:
            await _sleep(call.delay)
        fault = call.terminal
        if fault is None:
            return await original(self, method, str_or_url, *args, **kwargs)
        if fault["kind"] == "timeout":
            await _sleep(fault.get("seconds", 0.0))
        _record(call, fault, "aiohttp", method, host, path, start)
        if fault["kind"] == "malformed_body":
            response = await original(self, method, str_or_url, *args, **kwargs)
            _aiohttp_spoil(response, await response.read())
            return response
        if fault["kind"] != "http_status":
            raise _aiohttp_error(fault, url)
        response = _aiohttp_response(self, method, url, fault)
        await _aiohttp_raise_for_status(self, response, kwargs)
        return response

    return _request
