"""An episode killed by --episode-timeout keeps the spans and chaos faults recorded before the
kill: on its stored row, in `inspect --episode`, in `inspect RUN` and on the dashboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.poisson_prove.chaos.conftest import stored_rows
from tests.poisson_prove.helpers import write

AGENT = """
import asyncio, os, time
import httpx
from poisson_prove import Episode, record, step

URL = os.environ["TOOL_URL"]

def rollout(cfg, seed):
    record("planned", task="task-" + "x" * 200)
    with step("call tool", tool="search"):
        r = httpx.get(f"{URL}/tool/0", timeout=5)
    record("tool answered", status=r.status_code)
    if cfg["x"] == "b":  # condition b gives up on the failed tool; a waits for the model
        return Episode("hit", 1, 1, {})
    with step("wait for model"):
        with step("stream tokens", model="m1"):
            time.sleep(120)
    return Episode("ok", 1, 1, {})

async def rollout_async(cfg, seed):
    record("planned", task="task-" + "x" * 200)
    with step("call tool", tool="search"):
        async with httpx.AsyncClient() as client:
            r = await client.get(f"{URL}/tool/0", timeout=5)
    record("tool answered", status=r.status_code)
    if cfg["x"] == "b":
        return Episode("hit", 1, 1, {})
    with step("wait for model"):
        with step("stream tokens", model="m1"):
            await asyncio.sleep(120)
    return Episode("ok", 1, 1, {})
"""
SPEC = """
target = "agent:rollout"
target_id = "agent"
replicates = 5
[axes.x]
type = "categorical"
values = ["a", "b"]
[declare]
outcomes = ["ok", "hit"]
failures = ["hit"]
successes = ["ok"]
[capture]
max_observation_bytes = 40
[[chaos.faults]]
name = "tool_down"
kind = "http_status"
status = 503
rate = 1.0
"""


def _check_spans(spans: list[dict[str, Any]], stopped: str) -> None:
    names = [s["name"] for s in spans]
    assert names == [
        "planned", "call tool", "chaos tool_down", "tool answered", "wait for model", "stream tokens"
    ]
    planned, tool, fault, answered, wait, tokens = spans
    # values stay within max_observation_bytes, as in a row that ended normally
    assert len(planned["attributes"]["task"].encode()) <= 40 and planned["attributes"]["task"].endswith("…")
    assert tool["status"] == "ok" and tool["end"] >= tool["start"]
    assert tool["attributes"] == {"tool": "search"}
    assert fault["source"] == "chaos" and fault["parent"] == 1 and fault["status"] == "error"
    assert fault["attributes"]["chaos.fault"] == "tool_down" and fault["attributes"]["chaos.call"] == 0
    assert fault["attributes"]["http.response.status_code"] == 503
    assert answered["attributes"] == {"status": 503}
    # the steps open at the kill: ended then, marked error with why, nested as they were
    assert tokens["parent"] == 4 and wait["parent"] is None
    assert tokens["attributes"] == {"model": "m1"}
    # Both open steps were ended by the kill itself: at one moment, after everything the
    # episode recorded before it (no assumption on how long the machine took to get there).
    for open_step in (wait, tokens):
        assert open_step["status"] == "error" and open_step["error"] == stopped
        assert open_step["end"] >= open_step["start"] >= answered["start"]
    assert wait["end"] == tokens["end"] >= max(tool["end"], fault["end"])


@pytest.mark.parametrize("target", ["rollout", "rollout_async"])
def test_a_timed_out_episode_keeps_its_spans_everywhere(
    prove: Any, workdir: Path, tool_server: Any, target: str
) -> None:
    write(workdir, "agent.py", AGENT)
    write(workdir, "prove.toml", SPEC.replace("agent:rollout", f"agent:{target}"))
    env = {"TOOL_URL": tool_server.url}
    # 4 s: room for condition b to return (its tool call is faulted at once) on a loaded machine
    sweep = ("sweep", "--yes", "--max-mde", "1", "--episode-timeout", "4", "--concurrency", "2")
    result = prove(*sweep, env=env)
    assert result.returncode == 0, result.stderr
    assert tool_server.total == 0  # the fault answered for the server
    rows = stored_rows(workdir / "prove-runs")
    assert len(rows) == 10
    reason = "episode_timeout: still running when the episode was stopped after 4 s"
    stopped = reason[:37] + "…"  # cut to max_observation_bytes, 40 UTF-8 bytes with the "…"
    assert sorted(r["error_kind"] or r["outcome"] for r in rows) == ["episode_timeout"] * 5 + ["hit"] * 5
    for row in (r for r in rows if r["error_kind"]):
        assert row["error_kind"] == "episode_timeout" and row["outcome"] is None
        _check_spans(json.loads(row["spans"]), stopped)

    shown = prove("inspect", "--episode", "x a/0", "--json")
    assert shown.returncode == 0, shown.stderr
    episode = json.loads(shown.stdout)["episode"]
    assert episode["error_kind"] == "episode_timeout"
    _check_spans(episode["spans"], stopped)
    text = prove("inspect", "--episode", "x a/0")
    assert text.returncode == 0, text.stderr
    assert "chaos tool_down" in text.stdout and "stream tokens" in text.stdout

    trails = prove("inspect")
    assert trails.returncode == 0, trails.stderr
    line = next(x for x in trails.stdout.splitlines() if x.startswith("error episode_timeout"))
    assert f"wait for model > stream tokens: {stopped}" in line
    assert "(after chaos tool_down on call 0)" in line

    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, "")
    html = (workdir / "prove-runs" / "dashboard.html").read_text(encoding="utf-8")
    for needle in ("chaos tool_down", "stream tokens", "wait for model", stopped, "tool answered"):
        assert needle in html


CRASHING = """
import os
from poisson_prove import Episode, record, step

def rollout(cfg, seed):
    record("loaded", n=1)
    if cfg["x"] == "a":
        with step("native call"):
            os._exit(7)  # as a crash in C would: the process is gone, no answer
    return Episode("ok", 1, 1, {})
"""


def test_a_child_that_dies_keeps_its_spans_on_the_process_exit_row(prove: Any, workdir: Path) -> None:
    write(workdir, "agent.py", CRASHING)
    write(workdir, "prove.toml", SPEC.split("[capture]")[0])
    result = prove("sweep", "--yes", "--max-mde", "1", "--episode-timeout", "30")
    assert result.returncode == 0, result.stderr
    rows = [r for r in stored_rows(workdir / "prove-runs") if r["error_kind"]]
    assert len(rows) == 5
    for row in rows:
        assert row["error_kind"] == "process_exit" and "exit code 7" in row["error_message"]
        loaded, native = json.loads(row["spans"])
        assert (loaded["name"], loaded["attributes"], loaded["status"]) == ("loaded", {"n": 1}, "ok")
        assert native["name"] == "native call" and native["status"] == "error"
        assert native["error"] == "process_exit: the episode's process ended while this step ran"
