"""[capture] on a Dask worker running two episodes at once, through the installed `poisson-prove`
on the LocalCluster the sweep starts (one worker, two threads, 127.0.0.1, no dashboard), against
a real HTTP server: each call's span is stored once, in its own episode."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.poisson_prove.helpers import write

CALLS = 5
REPLICATES = 12
AGENT = f"""
import os, threading, time
import httpx
from poisson_prove import Episode

def rollout(cfg, seed):
    with httpx.Client() as client:
        for n in range({CALLS}):
            client.get(os.environ["TOOL_URL"] + f"/tool/{{seed}}/{{n}}", timeout=5)
    time.sleep(0.05)  # long enough that the worker's two threads overlap
    return Episode("ok", 1, 5, {{"pid": os.getpid(), "thread": threading.get_ident()}})
"""
SPEC = f"""
target = "agent:rollout"
target_id = "agent"
replicates = {REPLICATES}
[axes.x]
type = "categorical"
values = ["a"]
[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
[capture]
instrument = ["httpx"]
max_observation_bytes = 512
[dask]
n_workers = 1
threads_per_worker = 2
"""


def test_spans_are_stored_once_per_call_on_a_worker_with_two_threads(
    prove: Any, workdir: Path, tool_server: Any
) -> None:
    write(workdir, "agent.py", AGENT)
    (workdir / "prove.toml").write_text(SPEC, encoding="utf-8")
    result = prove(
        "sweep", "--yes", "--max-mde", "1", "--store", "runs", "--backend", "dask",
        env={"TOOL_URL": tool_server.url}, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "capture without spans" not in result.stdout
    assert f"done {REPLICATES} rollouts" in result.stdout
    rows = [row for batch in sorted((workdir / "runs").glob("*/episodes/*.parquet"))
            for row in pq.read_table(batch).to_pylist()]
    assert len(rows) == REPLICATES
    metas = [json.loads(row["meta"]) for row in rows]
    assert len({m["pid"] for m in metas}) == 1  # one worker process ...
    assert len({m["thread"] for m in metas}) == 2  # ... whose two threads both ran episodes
    span_ids: Counter[str] = Counter()
    for row in rows:
        otel = [s for s in json.loads(row["spans"]) if s["source"] == "otel"]
        urls = [s["attributes"].get("url.full") or s["attributes"]["http.url"] for s in otel]
        assert sorted(url.rsplit("/", 1)[-1] for url in urls) == [str(n) for n in range(CALLS)]  # no copy
        assert all(f"/tool/{row['seed']}/" in url for url in urls)  # its own calls, no neighbour's
        span_ids.update(s["span_id"] for s in otel)
    assert len(span_ids) == REPLICATES * CALLS and max(span_ids.values()) == 1
    assert tool_server.total == REPLICATES * CALLS
