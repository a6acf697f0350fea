"""`dashboard --serve`: the page over HTTP on 127.0.0.1, rebuilt when the store changes.

The page carries a `<meta http-equiv="refresh">`, and each request re-renders only when the
store's signature (run manifests, batch folders, the comparisons log) moved. `/?before=ID&after=ID`
is the same page with that pair's comparison first: the page's pair picker asks for it (the
last MAX_PAIRS pages asked for are kept; an unknown id is shown as the refusal it is).

The server is one asyncio event loop plus one rendering thread, whatever the clients do: a
connection costs a socket, not a thread; its request head must arrive within HEAD_TIMEOUT_S
(an idle or half-sent connection is then closed), each response ends the connection, at most
MAX_CONNECTIONS are open at once (more are answered 503 and closed), and a client that gives
up mid-answer costs nothing but its socket. Only GET of `/` (or `/dashboard.html`) addressed
to 127.0.0.1 or localhost is served: another Host is refused (403), so a web page cannot read
the dashboard by DNS rebinding.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from poisson_prove.dashboard.page import CSP
from prove_common.loopback import HOST, is_loopback_host

HEAD_TIMEOUT_S = 10.0  # for the request line and headers to arrive
SEND_TIMEOUT_S = 30.0  # for a client to take the answer
MAX_CONNECTIONS = 512
MAX_LINE_BYTES = 65536  # of the request line (longer: 414), and of each header line (431)
MAX_HEADERS = 100
BACKLOG = 512
SERVED_PATHS = ("/", "/dashboard.html")
MAX_PAIRS = 8  # pages of a chosen pair kept rendered
MAX_ID_CHARS = 200  # of a run id in the query

Pair = tuple[str, str]

Signature = tuple[tuple[str, int], ...]


def store_signature(root: Path, compared_log: Path | None) -> Signature:
    """Modification times that move whenever a run is created, gains a batch, or is compared."""
    marks: list[tuple[str, int]] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        if entry.is_dir():
            for inner in ("manifest.json", "episodes", "events.jsonl"):
                try:
                    marks.append((f"{entry.name}/{inner}", os.stat(Path(entry.path) / inner).st_mtime_ns))
                except OSError:
                    continue
    if compared_log is not None:
        try:
            marks.append(("compared", compared_log.stat().st_mtime_ns))
        except OSError:
            pass
    return tuple(marks)


def requested_pair(target: str) -> Pair | None:
    """The (before, after) run ids of `/?before=...&after=...`, None for the plain page."""
    query = parse_qs(urlsplit(target).query, max_num_fields=10)
    before, after = (query.get(name, [""])[0][:MAX_ID_CHARS] for name in ("before", "after"))
    return (before, after) if before and after else None


class PageCache:
    """The rendered pages (the plain one and a few chosen pairs'), each rebuilt (once, under a
    lock) when the store's signature changes."""

    def __init__(
        self, root: Path, compared_log: Path | None, render: Callable[[Pair | None], str]
    ) -> None:
        self.root, self.compared_log, self._render = root, compared_log, render
        self._lock = threading.Lock()
        self._pages: dict[Pair | None, tuple[Signature, bytes]] = {}

    def page(self, pair: Pair | None = None) -> bytes:
        with self._lock:
            signature = store_signature(self.root, self.compared_log)
            kept = self._pages.pop(pair, None)
            if kept is None or kept[0] != signature:
                kept = (signature, self._render(pair).encode("utf-8"))
            self._pages[pair] = kept  # the newest last
            while len(self._pages) > MAX_PAIRS + 1:
                del self._pages[next(iter(self._pages))]
            return kept[1]


class _Refusal(Exception):
    """A request answered with an error status instead of the page."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message


def _response(status: int, reason: str, body: bytes, content_type: str) -> bytes:
    head = [
        f"HTTP/1.1 {status} {reason}",
        f"Content-Type: {content_type}",
        f"Content-Security-Policy: {CSP}",
        "X-Content-Type-Options: nosniff",
        "Cache-Control: no-store",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]]:
    """(method, path, headers by lower-case name) of one request head; _Refusal when it is
    too long or malformed, asyncio.IncompleteReadError when the client left."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise _Refusal(414, "URI Too Long", "the request line is too long") from None
    parts = line.decode("latin-1").strip().split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _Refusal(400, "Bad Request", "not an HTTP/1 request line")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        try:
            raw = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError:
            raise _Refusal(431, "Request Header Fields Too Large", "a header line is too long") from None
        text = raw.decode("latin-1").strip()
        if not text:
            return parts[0], parts[1], headers
        name, _, value = text.partition(":")
        headers[name.strip().lower()] = value.strip()
    raise _Refusal(431, "Request Header Fields Too Large", f"more than {MAX_HEADERS} headers")


class DashboardServer:
    """The page served on a socket bound to 127.0.0.1 (see the module's docstring)."""

    def __init__(self, cache: PageCache, sock: socket.socket) -> None:
        self.cache = cache
        self.socket = sock
        self.server_address = sock.getsockname()[:2]
        self.open_connections = 0
        self._render = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard-render")

    def serve_forever(self) -> None:
        """Serve until Ctrl-C (KeyboardInterrupt is raised to the caller)."""
        asyncio.run(self._serve())

    def server_close(self) -> None:
        self._render.shutdown(wait=False, cancel_futures=True)
        self.socket.close()

    async def _serve(self) -> None:
        server = await asyncio.start_server(
            self._connection, sock=self.socket, limit=MAX_LINE_BYTES, backlog=BACKLOG
        )
        async with server:
            await server.serve_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open_connections += 1
        try:
            if self.open_connections > MAX_CONNECTIONS:
                answer = _response(503, "Service Unavailable", b"503 too many connections\n", "text/plain")
            else:
                answer = await self._answer(reader)
            if answer:
                writer.write(answer)
                await asyncio.wait_for(writer.drain(), SEND_TIMEOUT_S)
        except (TimeoutError, OSError, asyncio.IncompleteReadError):
            pass  # the client left, or never sent (or never took) a whole request: only its socket
        finally:
            self.open_connections -= 1
            writer.close()
            with contextlib.suppress(OSError, asyncio.TimeoutError):
                await asyncio.wait_for(writer.wait_closed(), SEND_TIMEOUT_S)

    async def _answer(self, reader: asyncio.StreamReader) -> bytes:
        """The whole answer to the connection's one request (b"" when its head never came)."""
        try:
            method, path, headers = await asyncio.wait_for(_read_head(reader), HEAD_TIMEOUT_S)
            if "host" in headers and not is_loopback_host(headers["host"]):
                raise _Refusal(403, "Forbidden", f"Host {headers['host']!r} is not this machine")
            if method != "GET":
                raise _Refusal(501, "Not Implemented", f"unsupported method ({method!r})")
            if path.split("?", 1)[0] not in SERVED_PATHS:
                raise _Refusal(404, "Not Found", "only / is served")
        except _Refusal as refusal:
            body = f"{refusal.status} {refusal.message}\n".encode()
            return _response(refusal.status, refusal.reason, body, "text/plain; charset=utf-8")
        except TimeoutError:
            body = b"408 the request did not arrive in time\n"
            return _response(408, "Request Timeout", body, "text/plain; charset=utf-8")
        pair = requested_pair(path)
        page = await asyncio.get_running_loop().run_in_executor(self._render, self.cache.page, pair)
        return _response(200, "OK", page, "text/html; charset=utf-8")


def make_server(cache: PageCache, port: int = 0) -> DashboardServer:
    """A server bound to 127.0.0.1 only (port 0: a free one); OSError when the port is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return DashboardServer(cache, sock)
