"""A real HTTP server on 127.0.0.1 counting the calls it answers, and chaos projects around it
(rollouts through httpx, httpx2, requests and aiohttp, and through urllib, which chaos cannot fault)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.poisson_prove.helpers import write


class ToolServer:
    """Answers GET /tool/<n> with a JSON body; counts what it answered, by path."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        lock = threading.Lock()
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with lock:
                    hits[self.path] += 1
                body = json.dumps({"ok": True, "path": self.path, "text": "a tool's answer " * 4}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def total(self) -> int:
        return sum(self.hits.values())


@pytest.fixture
def tool_server() -> Iterator[ToolServer]:
    server = ToolServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


# A rollout making CALLS calls through one client; each call's result is kept in meta, so the
# test can hold what the agent saw against what Prove recorded.
AGENT = '''
import asyncio, json, os, time, urllib.request
import aiohttp, httpx, httpx2, requests
from poisson_prove import Episode

URL = os.environ["TOOL_URL"]
CALLS = 5

def _result_httpx(client, n, lib=httpx):
    try:
        r = client.get(f"{URL}/tool/{n}", timeout=5)
    except lib.TimeoutException:
        return "timeout"
    except lib.ConnectError:
        return "connection_error"
    except lib.ReadError:
        return "connection_reset"
    if r.status_code != 200:
        return f"status_{r.status_code}"
    try:
        json.loads(r.content)
    except ValueError:
        return "malformed_body"
    return "ok"

def _result_requests(session, n):
    try:
        r = session.get(f"{URL}/tool/{n}", timeout=5)
    except requests.exceptions.Timeout:
        return "timeout"
    except requests.exceptions.ConnectionError as exc:
        return "connection_reset" if "reset" in str(exc) else "connection_error"
    if r.status_code != 200:
        return f"status_{r.status_code}"
    try:
        r.json()
    except ValueError:
        return "malformed_body"
    return "ok"

async def _result_aiohttp(session, n):
    try:
        async with session.get(f"{URL}/tool/{n}", timeout=aiohttp.ClientTimeout(total=5)) as r:
            if r.status != 200:
                return f"status_{r.status}"
            body = await r.read()
    except asyncio.TimeoutError:
        return "timeout"
    except aiohttp.ClientConnectorError:
        return "connection_error"
    except aiohttp.ClientOSError as exc:
        return "connection_reset" if exc.errno == 104 else "connection_error"
    try:
        json.loads(body)
    except ValueError:
        return "malformed_body"
    return "ok"

async def _aiohttp_calls():
    async with aiohttp.ClientSession() as session:
        return [await _result_aiohttp(session, n) for n in range(CALLS)]

def _episode(results):
    return Episode("ok" if all(r == "ok" for r in results) else "hit", CALLS, CALLS, {"calls": results})

def rollout_httpx(cfg, seed):
    with httpx.Client() as client:
        return _episode([_result_httpx(client, n) for n in range(CALLS)])

def rollout_httpx2(cfg, seed):
    """httpx2, the transport of the current openai client."""
    with httpx2.Client() as client:
        return _episode([_result_httpx(client, n, httpx2) for n in range(CALLS)])

def rollout_aiohttp(cfg, seed):
    return _episode(asyncio.run(_aiohttp_calls()))

def rollout_urllib(cfg, seed):
    """The standard library's urllib: a client chaos cannot fault."""
    results = []
    for n in range(CALLS):
        with urllib.request.urlopen(f"{URL}/tool/{n}", timeout=5) as r:
            json.loads(r.read())
        results.append("ok")
    return _episode(results)

def rollout_httpx_then_hang(cfg, seed):
    """Makes its calls, then never returns: --episode-timeout stops it before it ends."""
    with httpx.Client() as client:
        for n in range(CALLS):
            _result_httpx(client, n)
    time.sleep(120)

def rollout_requests(cfg, seed):
    with requests.Session() as session:
        return _episode([_result_requests(session, n) for n in range(CALLS)])

async def _async_calls():
    out = []
    async with httpx.AsyncClient() as client:
        for n in range(CALLS):
            try:
                r = await client.get(f"{URL}/tool/{n}", timeout=5)
                out.append("ok" if r.status_code == 200 else f"status_{r.status_code}")
            except httpx.TransportError as exc:
                out.append(type(exc).__name__)
    return out

def rollout_async(cfg, seed):
    return _episode(asyncio.run(_async_calls()))

async def rollout_coroutine(cfg, seed):
    """An async def rollout: the pool awaits it on its event loop, several at once."""
    return _episode(await _async_calls())

def rollout_patched(cfg, seed):
    """A changed agent making the same calls: it shrugs off a malformed body."""
    with httpx.Client() as client:
        results = [_result_httpx(client, n) for n in range(CALLS)]
    return _episode(["ok" if r == "malformed_body" else r for r in results])
'''


def chaos_project(folder: Path, target: str, faults: str, *, replicates: int, axes: str = "") -> None:
    write(folder, "agent.py", AGENT)
    if not axes:
        axes = '[axes.x]\ntype = "categorical"\nvalues = ["a"]\n'
    text = (
        f'target = "agent:{target}"\ntarget_id = "agent"\nt_unit = "calls"\nreplicates = {replicates}\n'
        f'{axes}\n[declare]\noutcomes = ["ok", "hit"]\nfailures = ["hit"]\nsuccesses = ["ok"]\n\n{faults}'
    )
    (folder / "prove.toml").write_text(text, encoding="utf-8")


def stored_rows(store: Path) -> list[dict[str, Any]]:
    """Every stored row of the only (or newest) run, read back with pyarrow."""
    runs = sorted(p for p in store.iterdir() if (p / "manifest.json").exists())
    rows: list[dict[str, Any]] = []
    for batch in sorted((runs[-1] / "episodes").glob("*.parquet")):
        rows.extend(pq.read_table(batch).to_pylist())
    return rows


def rows_of(store: Path, run_dir: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for batch in sorted((run_dir / "episodes").glob("*.parquet")):
        rows.extend(pq.read_table(batch).to_pylist())
    return rows


def chaos_spans(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in json.loads(row["spans"] or "[]") if s.get("source") == "chaos"]


def reach_entries(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The episode's accounting entries of what chaos reached (one expected, its last span)."""
    return [s for s in json.loads(row["spans"] or "[]") if s.get("source") == "prove"]


def manifest_named(store: Path, name: str) -> dict[str, Any]:
    for path in store.glob("*/manifest.json"):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if manifest["name"] == name:
            return manifest
    raise AssertionError(f"no run named {name!r} in {store}")


# One http_status fault, at a rate that hits some calls of every episode and spares others.
FAULT = '[[chaos.faults]]\nkind = "http_status"\nstatus = 429\nrate = 0.4\nname = "throttled"\n'
