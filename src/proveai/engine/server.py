"""The local detection engine: a Starlette app served by uvicorn on 127.0.0.1 only.

GET  /health               -> {"status": "ok", layers, baseline, judge, store, analyzed}
POST /ingest/traces/stream -> text/event-stream: `received`, one `stage` per layer, `result`
POST /ingest/traces        -> {"count": N, "results": [AnalyzeResponse, ...]} (no stream)
Bodies are OTLP JSON documents as FileExporter writes them; X-Prove-Run-Id,
X-Prove-Customer-Id and X-Prove-Mas-Name headers are echoed in each response.

The engine has no authentication, so it answers only what a local program sends on purpose:
a request whose Host or Origin is not this machine is refused (403: a web page in the user's
browser, by DNS rebinding or a cross-site POST, cannot read or write it), a POST body must be
`application/json` (415: a form or text/plain body is what a page sends without asking), and
a body is counted while it is read and refused at MAX_BODY_BYTES however it is sent (413).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove_common.loopback import HOST, is_loopback_host, is_loopback_origin
from proveai.engine.analysis import Identity, Run, analyze, respond, stages, store_safely
from proveai.engine.ingest import MAX_BODY_BYTES, Refused, check_content_type, split_traces, too_large
from proveai.engine.layers import Analysis, EngineSettings
from proveai.engine.model import LAYERS
from proveai.errors import ProveAIError
from proveai.traces.trace import Trace
from proveai.version import __version__


def foreign_request(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """Why a request must be refused as not this machine's (403), or None: a Host other than
    127.0.0.1 or localhost (DNS rebinding), or an Origin that is not one of those (a web
    page elsewhere). A request without either is a local program's, not a browser's."""
    for raw_name, raw_value in headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name == "host" and not is_loopback_host(value):
            return f"Host {value!r} is not this machine: the engine answers only 127.0.0.1 and localhost"
        if name == "origin" and not is_loopback_origin(value):
            return f"Origin {value!r} is not this machine: a web page cannot use the engine"
    return None


@dataclass
class EngineState:
    settings: EngineSettings
    store: Path | None
    analyzed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, n: int) -> None:
        with self.lock:
            self.analyzed += n


def sse(event: str, data: dict[str, Any], event_id: int) -> bytes:
    return f"id: {event_id}\nevent: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def create_app(settings: EngineSettings, store: Path | None) -> Any:
    """The ASGI app (Starlette); needs the `engine` extra."""
    from starlette.applications import Starlette  # starlette: engine extra, only when serving
    from starlette.concurrency import run_in_threadpool  # starlette
    from starlette.requests import ClientDisconnect, Request  # starlette
    from starlette.responses import JSONResponse, Response, StreamingResponse  # starlette
    from starlette.routing import Route  # starlette


    state = EngineState(settings, store)

    def identity(request: Request) -> Identity:
        h = request.headers
        return Identity(h.get("x-prove-run-id"), h.get("x-prove-customer-id"), h.get("x-prove-mas-name"))

    async def read_traces(request: Request) -> list[Trace]:
        """The body's traces: JSON only, counted while it arrives (Content-Length or chunked)
        and refused the moment it passes the limit, the rest left unread."""
        check_content_type(request.headers.get("content-type"))
        declared = (request.headers.get("content-length") or "").strip()
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise too_large(int(declared))
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise too_large(None)
        return await run_in_threadpool(split_traces, bytes(body))

    def refused(err: ProveAIError) -> JSONResponse:
        status = err.status if isinstance(err, Refused) else 400
        return JSONResponse({"error": err.message}, status_code=status)

    def gone() -> Response:
        return Response(status_code=400)  # the client left mid-body: nobody reads this

    async def health(request: Request) -> JSONResponse:
        baseline = settings.baseline
        return JSONResponse({
            "status": "ok", "engine": "proveai", "version": __version__, "layers": list(LAYERS),
            "baseline": baseline.describe() if baseline else None, "judge": settings.judge_model,
            "judge_max": settings.judge_max, "max_iterations": settings.max_iterations,
            "store": str(store) if store else None, "analyzed": state.analyzed,
        })

    async def ingest(request: Request) -> Response:
        try:
            traces = await read_traces(request)
        except ProveAIError as err:
            return refused(err)
        except ClientDisconnect:
            return gone()
        who = identity(request)
        try:
            results = [await run_in_threadpool(analyze, t, settings, who, store) for t in traces]
        except Exception as exc:  # a named failure, not a bare 500 page
            return JSONResponse({"error": f"analysis failed: {type(exc).__name__}: {exc}"}, status_code=500)
        state.count(len(results))
        return JSONResponse({"count": len(results), "results": [r.to_dict() for r in results]})

    async def ingest_stream(request: Request) -> Any:
        try:
            traces = await read_traces(request)
        except ProveAIError as err:
            return refused(err)
        except ClientDisconnect:
            return gone()
        if len(traces) != 1:
            return refused(Refused(
                f"the stream analyzes one trace per request; this body holds {len(traces)} "
                "(POST several to /ingest/traces)"
            ))
        trace, who = traces[0], identity(request)

        async def events() -> AsyncIterator[bytes]:
            run = Run(Analysis(trace, settings))
            yield sse("received", {"trace_id": trace.trace_id, "spans": len(trace.spans),
                                   "agents": trace.agents, "layers": list(LAYERS)}, 0)
            try:
                steps = stages(run)
                for number in range(1, len(LAYERS) + 1):
                    result = await run_in_threadpool(next, steps)
                    yield sse("stage", result.to_dict(), number)
                stored = await run_in_threadpool(store_safely, store, run)
            except Exception as exc:  # the client gets a named failure instead of a cut stream
                failure = {"error": f"analysis failed: {type(exc).__name__}: {exc}"}
                yield sse("error", failure, len(LAYERS) + 1)
                return
            state.count(1)
            yield sse("result", respond(run, who, stored).to_dict(), len(LAYERS) + 1)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    app = Starlette(routes=[
        Route("/health", health, methods=["GET"]),
        Route("/ingest/traces", ingest, methods=["POST"]),
        Route("/ingest/traces/stream", ingest_stream, methods=["POST"]),
    ])

    async def this_machine_only(scope: Any, receive: Any, send: Any) -> None:
        """Every route behind foreign_request: refused before routing, nothing read."""
        why = foreign_request(scope.get("headers") or ()) if scope["type"] == "http" else None
        if why is not None:
            await JSONResponse({"error": why}, status_code=403)(scope, receive, send)
            return
        await app(scope, receive, send)

    return this_machine_only


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:port (0 picks a free port); ProveAIError when taken."""
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only for
    # sockets that say they are TCP; without it Nagle + delayed ACKs add ~40 ms per request
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise ProveAIError(
            f"cannot listen on {HOST}:{port}: {exc.strerror or exc}",
            suggestions=(f"proveai engine serve --port {port + 1}  (or stop what holds the port)",),
        ) from None
    sock.listen(128)
    return sock


def serve(app: Any, sock: socket.socket) -> None:
    """Serve until Ctrl-C / SIGTERM; uvicorn drains open requests, then returns."""
    import uvicorn  # uvicorn: engine extra, only when serving

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
