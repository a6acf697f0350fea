"""The detection engine: traces ingested per second and latency to the stream's first event.

Two servers run side by side on 127.0.0.1, each in its own process:
- the engine (`proveai engine serve`, writing to a temporary store, no baseline, judge off);
- the baseline: a bare Starlette app on the same uvicorn stack that reads the body and answers
  one JSON object (POST /ingest/traces) or one SSE event (POST /ingest/traces/stream).
Both receive the same 4-agent OTLP traces (one with a planted loop every fourth). Measured:
1. traces/s over sequential POST /ingest/traces of one trace each, and in batches of 25;
2. median and p90 time from sending POST /ingest/traces/stream to the first SSE event, and
   to the final event.
Prints each figure and the engine / baseline ratio. Rounds alternate servers to share noise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from proveai import monitor, trace

ECHO_APP = '''
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

async def ingest(request):
    body = await request.body()
    return JSONResponse({"count": 1, "bytes": len(body)})

async def stream(request):
    body = await request.body()
    async def events():
        yield f"event: result\\ndata: {{\\"bytes\\": {len(body)}}}\\n\\n".encode()
    return StreamingResponse(events(), media_type="text/event-stream")

app = Starlette(routes=[Route("/ingest/traces", ingest, methods=["POST"]),
                        Route("/ingest/traces/stream", stream, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
'''


@monitor("planner")
def planner(q: str) -> str:
    return f"plan for {q}"


@monitor("researcher", parent_agent="planner")
def researcher(p: str) -> str:
    return f"notes on {p} [1]"


@monitor("synthesizer", parent_agent="researcher")
def synthesizer(n: str) -> str:
    return f"summary of {n}"


@monitor("reviewer", parent_agent="synthesizer")
def reviewer(s: str) -> str:
    return "approved"


def make_traces(count: int) -> list[dict]:
    from proveai.traces.otlp import encode_trace

    documents = []
    for i in range(count):
        with trace("bench") as t:
            p = planner(f"topic {i}")
            notes = [researcher(p) for _ in range(6 if i % 4 == 0 else 1)]
            reviewer(synthesizer(" ".join(notes)))
        documents.append(encode_trace(t))
    return documents


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_up(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.post(url + "/ingest/traces", content=b"{}", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"server at {url} did not start")


def ingest_rate(url: str, docs: list[dict], batch: int) -> float:
    with httpx.Client(timeout=60) as client:
        start = time.perf_counter()
        for i in range(0, len(docs), batch):
            merged = {"resourceSpans": [rs for d in docs[i : i + batch] for rs in d["resourceSpans"]]}
            client.post(url + "/ingest/traces", json=merged).raise_for_status()
        return len(docs) / (time.perf_counter() - start)


def stream_latency(url: str, docs: list[dict]) -> tuple[list[float], list[float]]:
    first, last = [], []
    with httpx.Client(timeout=60) as client:
        for doc in docs:
            body = json.dumps(doc)
            start = time.perf_counter()
            seen_first = None
            with client.stream("POST", url + "/ingest/traces/stream", content=body,
                               headers={"Content-Type": "application/json"}) as reply:
                for line in reply.iter_lines():
                    if line.startswith("event:") and seen_first is None:
                        seen_first = time.perf_counter() - start
            first.append(seen_first or float("nan"))
            last.append(time.perf_counter() - start)
    return first, last


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=200, help="traces per ingest round")
    parser.add_argument("--streams", type=int, default=60, help="stream requests per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-engine-"))
    env = {**os.environ, "PROVEAI_TRACES_DIR": str(tmp / "store")}
    engine_port, echo_port = free_port(), free_port()
    bindir = Path(sys.executable).parent
    engine = subprocess.Popen([str(bindir / "proveai"), "engine", "serve", "--port", str(engine_port)],
                              env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    echo = subprocess.Popen([sys.executable, "-c", ECHO_APP, str(echo_port)], cwd=tmp,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    servers = {"engine": f"http://127.0.0.1:{engine_port}", "echo": f"http://127.0.0.1:{echo_port}"}
    try:
        for url in servers.values():
            wait_up(url)
        docs = make_traces(args.traces)
        rates: dict[tuple[str, int], list[float]] = {}
        firsts: dict[str, list[float]] = {"engine": [], "echo": []}
        lasts: dict[str, list[float]] = {"engine": [], "echo": []}
        for _ in range(args.rounds):
            for name, url in servers.items():
                for batch in (1, 25):
                    rates.setdefault((name, batch), []).append(ingest_rate(url, docs, batch))
                f, last = stream_latency(url, docs[: args.streams])
                firsts[name] += f
                lasts[name] += last
        print(f"{args.traces} traces x {args.rounds} rounds; {args.streams} streams per round")
        for batch in (1, 25):
            e, b = statistics.median(rates[("engine", batch)]), statistics.median(rates[("echo", batch)])
            print(f"ingest, {batch:>2} trace(s)/request: engine {e:8.1f} traces/s, "
                  f"echo {b:8.1f} traces/s, engine/echo {e / b:.2f}")
        for label, data in (("first event", firsts), ("final event", lasts)):
            e, b = statistics.median(data["engine"]) * 1000, statistics.median(data["echo"]) * 1000
            print(f"stream {label}: engine median {e:6.2f} ms (p90 {p90(data['engine']) * 1000:6.2f}), "
                  f"echo median {b:6.2f} ms (p90 {p90(data['echo']) * 1000:6.2f}), engine/echo {e / b:.2f}")
    finally:
        for process in (engine, echo):
            process.terminate()
            process.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
