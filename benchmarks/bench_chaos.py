"""[chaos] overhead on a real HTTP call: httpx and requests GETs to a server on 127.0.0.1,
without faults and inside an episode's chaos scope whose faults (rate 1e-9: every decision is
made, none fires) are checked on every call. Alternating rounds, so drift hits both sides.

Prints microseconds per call and the ratio; goal: the scope adds < 20 us per call (a loopback
call takes ~250 us here, a call to a model hundreds of milliseconds).
"""

from __future__ import annotations

import argparse
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import requests

from poisson_prove.chaos.inject import chaos_scope

FAULTS = {
    "salt": "bench",
    "faults": [
        {"name": "a", "kind": "http_status", "status": 503, "rate": 1e-9},
        {"name": "b", "kind": "timeout", "rate": 1e-9},
        {"name": "c", "kind": "latency", "seconds": 1.0, "rate": 1e-9},
    ],
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else a delayed ACK costs ~40 ms per keep-alive call

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


def _calls(get: Any, url: str, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        get(url)
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    with httpx.Client() as client, requests.Session() as session:
        for name, get in (("httpx", client.get), ("requests", session.get)):
            _calls(get, url, 50)  # warm the connection
            plain, scoped = [], []
            for _ in range(args.rounds):
                plain.append(_calls(get, url, args.calls))
                with chaos_scope(FAULTS, {}, 7):
                    scoped.append(_calls(get, url, args.calls))
            base, with_chaos = min(plain), min(scoped)
            print(
                f"{name:8s} plain {base:7.1f} us/call  in chaos scope {with_chaos:7.1f} us/call  "
                f"ratio {with_chaos / base:.3f}"
            )
    server.shutdown()


if __name__ == "__main__":
    main()
