"""`dashboard --serve`: the page over HTTP on 127.0.0.1, rebuilt when the store changes.

The page carries a `<meta http-equiv="refresh">` (no script), and each request re-renders
only when the store's signature (run manifests, batch folders, the comparisons log) moved.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from poisson_prove.dashboard.page import CSP

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


class PageCache:
    """The rendered page, rebuilt (once, under a lock) when the store's signature changes."""

    def __init__(self, root: Path, compared_log: Path | None, render: Callable[[], str]) -> None:
        self.root, self.compared_log, self._render = root, compared_log, render
        self._lock = threading.Lock()
        self._signature: Signature | None = None
        self._page = b""

    def page(self) -> bytes:
        with self._lock:
            signature = store_signature(self.root, self.compared_log)
            if signature != self._signature:
                self._page = self._render().encode("utf-8")
                self._signature = signature
            return self._page


def make_server(cache: PageCache, port: int = 0) -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1 only (port 0: a free one)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] not in ("/", "/dashboard.html"):
                self.send_error(404, "only / is served")
                return
            body = cache.page()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the terminal shows the URL, not every request

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server
