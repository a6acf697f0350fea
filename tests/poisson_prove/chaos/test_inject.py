"""[chaos] against a real HTTP server on 127.0.0.1: the faults reach the agent's httpx, httpx2,
requests and aiohttp calls at the configured rates, are recorded on the episode, and land on
the same calls in a run paired with --pair-with, whichever of these clients makes them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import binomtest

from tests.poisson_prove.chaos.conftest import chaos_project, chaos_spans, reach_entries, rows_of, stored_rows

SALT = "5eed0c4a05"
CALLS = 5
FAULTS = """
[[chaos.faults]]
kind = "http_status"
status = 503
rate = 0.2

[[chaos.faults]]
kind = "timeout"
rate = 0.1

[[chaos.faults]]
kind = "connection_reset"
rate = 0.1

[[chaos.faults]]
kind = "malformed_body"
rate = 0.1

[[chaos.faults]]
kind = "latency"
seconds = 0.001
rate = 0.2
hosts = ["127.0.0.1"]
"""
# The first terminal fault that fires (in the spec's order) ends the call; latency adds up.
EFFECTIVE = {
    "http_status_503": 0.2,
    "timeout": 0.8 * 0.1,
    "connection_reset": 0.8 * 0.9 * 0.1,
    "malformed_body": 0.8 * 0.9 * 0.9 * 0.1,
    "latency": 0.2,
}
SEEN_AS = {
    "http_status_503": "status_503",
    "timeout": "timeout",
    "connection_reset": "connection_reset",
    "malformed_body": "malformed_body",
}


def _sweep(prove, *args: str, server_url: str):
    return prove(
        "sweep", "--yes", "--max-mde", "1", "--store", "runs", *args, env={"TOOL_URL": server_url}
    )


CLIENT_OF = {"rollout_httpx2": "httpx2", "rollout_aiohttp": "aiohttp", "rollout_requests": "requests"}


def _rows_named(workdir: Path, name: str) -> list[dict]:
    manifests = (workdir / "runs").glob("*/manifest.json")
    run = next(p.parent for p in manifests if json.loads(p.read_text())["name"] == name)
    return rows_of(workdir / "runs", run)


def _check_rates_and_records(rows: list[dict], server_hits: int) -> None:
    calls = len(rows) * CALLS
    placed: Counter[str] = Counter()
    for row in rows:
        assert row["outcome"] in ("ok", "hit"), row["error_message"]
        seen = json.loads(row["meta"])["calls"]
        terminal = {s["attributes"]["chaos.call"]: s for s in chaos_spans(row) if s["status"] == "error"}
        for index, result in enumerate(seen):
            # What the agent saw on each call is exactly what Prove recorded for that call.
            fault = terminal.get(index)
            assert result == (SEEN_AS[fault["attributes"]["chaos.fault"]] if fault else "ok"), (index, row)
        for span in chaos_spans(row):
            placed[span["attributes"]["chaos.fault"]] += 1
            assert span["attributes"]["server.address"] == "127.0.0.1"
            assert span["attributes"]["url.path"].startswith("/tool/")
        assert row["outcome"] == ("ok" if not terminal else "hit")
        # The episode's last span counts its calls and the calls a fault hit (a latency counts).
        (reach,) = reach_entries(row)
        assert json.loads(row["spans"])[-1] == reach
        faulted = {s["attributes"]["chaos.call"] for s in chaos_spans(row)}
        assert reach["attributes"]["chaos.calls"] == CALLS
        assert reach["attributes"]["chaos.faulted"] == len(faulted)
    for name, rate in EFFECTIVE.items():
        test = binomtest(placed[name], calls, rate)
        assert test.pvalue > 0.001, (name, placed[name], calls, rate)
    never_sent = placed["http_status_503"] + placed["timeout"] + placed["connection_reset"]
    assert server_hits == calls - never_sent  # a faulted call never reaches the server


@pytest.mark.parametrize("target", ["rollout_httpx", "rollout_requests", "rollout_httpx2", "rollout_aiohttp"])
def test_faults_reach_the_calls_at_their_rates_and_are_recorded(
    prove, workdir: Path, tool_server, target: str
) -> None:
    chaos_project(workdir, target, FAULTS, replicates=60)
    result = _sweep(prove, "--salt", SALT, server_url=tool_server.url)
    assert result.returncode == 0, result.stderr
    assert "chaos http_status 503 at 0.2; timeout at 0.1; connection_reset at 0.1" in result.stdout
    assert "injected into httpx, httpx2, requests and aiohttp calls" in result.stdout
    assert "[chaos] reached no call" not in result.stdout
    rows = stored_rows(workdir / "runs")
    assert len(rows) == 60
    _check_rates_and_records(rows, tool_server.total)
    manifest = json.loads(next((workdir / "runs").glob("*/manifest.json")).read_text())
    assert manifest["chaos"]["injected"] is True
    assert [f["name"] for f in manifest["chaos"]["faults"]] == list(EFFECTIVE)


def test_paired_runs_see_the_same_faults_on_the_same_calls(prove, workdir: Path, tool_server) -> None:
    chaos_project(workdir, "rollout_httpx", FAULTS, replicates=30)
    first = _sweep(prove, "--name", "before", server_url=tool_server.url)
    assert first.returncode == 0, first.stderr
    second = _sweep(
        prove, "--name", "after", "--pair-with", "before", "--target", "agent:rollout_patched",
        server_url=tool_server.url,
    )
    assert second.returncode == 0, second.stderr
    third = _sweep(prove, "--name", "fresh", server_url=tool_server.url)  # a new salt
    assert third.returncode == 0, third.stderr

    def placement(name: str) -> set[tuple[str, int, int, str]]:
        run = next(p.parent for p in (workdir / "runs").glob("*/manifest.json")
                   if json.loads(p.read_text())["name"] == name)
        return {
            (row["cell"], row["seed"], s["attributes"]["chaos.call"], s["attributes"]["chaos.fault"])
            for row in rows_of(workdir / "runs", run)
            for s in chaos_spans(row)
        }

    before, after, fresh = placement("before"), placement("after"), placement("fresh")
    assert len(before) > 20
    assert before == after
    assert before != fresh  # the placement follows the salt, not a fixed pattern


def test_every_client_sees_the_same_faults_on_the_same_calls(prove, workdir: Path, tool_server) -> None:
    # The current openai client sends through httpx2; aiohttp is the other common async client.
    # Paired with an httpx run, each gets the same keyed decisions: the same faults on the same
    # calls, and the agent sees each one as that client's own error.
    chaos_project(workdir, "rollout_httpx", FAULTS, replicates=30)
    first = _sweep(prove, "--name", "httpx", "--salt", SALT, server_url=tool_server.url)
    assert first.returncode == 0, first.stderr
    for target in CLIENT_OF:
        paired = _sweep(
            prove, "--name", target, "--pair-with", "httpx", "--target", f"agent:{target}",
            server_url=tool_server.url,
        )
        assert paired.returncode == 0, paired.stderr
        assert "Traceback" not in paired.stderr
        assert f'done 30 rollouts in run "{target}" (complete)' in paired.stdout

    rows = {name: _rows_named(workdir, name) for name in ("httpx", *CLIENT_OF)}

    def seen(name: str) -> dict[tuple[str, int], list[str]]:
        return {(r["cell"], r["replicate"]): json.loads(r["meta"])["calls"] for r in rows[name]}

    def placement(name: str) -> set[tuple[str, int, int, str]]:
        return {
            (row["cell"], row["seed"], s["attributes"]["chaos.call"], s["attributes"]["chaos.fault"])
            for row in rows[name]
            for s in chaos_spans(row)
        }

    assert len(placement("httpx")) > 30
    assert sum(r != "ok" for calls in seen("httpx").values() for r in calls) > 20
    for target, client in CLIENT_OF.items():
        assert placement(target) == placement("httpx"), target
        assert seen(target) == seen("httpx"), target
        assert {s["attributes"]["chaos.client"] for row in rows[target] for s in chaos_spans(row)} == {client}


def test_a_rate_axis_makes_the_fault_rate_a_condition(prove, workdir: Path, tool_server) -> None:
    axes = '[axes.fail_rate]\ntype = "continuous"\nvalues = [0.0, 0.5]\n'
    faults = '[[chaos.faults]]\nkind = "http_status"\nstatus = 500\nrate_axis = "fail_rate"\n'
    chaos_project(workdir, "rollout_httpx", faults, replicates=40, axes=axes)
    result = _sweep(prove, "--salt", SALT, server_url=tool_server.url)
    assert result.returncode == 0, result.stderr
    assert "http_status 500 at the fail_rate axis's rate" in result.stdout
    by_cell: Counter[float] = Counter()
    for row in stored_rows(workdir / "runs"):
        by_cell[json.loads(row["cfg"])["fail_rate"] if row["cfg"].startswith("{") else row["cfg"]] += len(
            chaos_spans(row)
        )
    counts = sorted(by_cell.items())
    assert counts[0][1] == 0  # rate 0.0: no call faulted
    assert binomtest(counts[1][1], 40 * CALLS, 0.5).pvalue > 0.001


def test_async_httpx_calls_are_faulted_too(prove, workdir: Path, tool_server) -> None:
    faults = '[[chaos.faults]]\nkind = "connection_error"\nrate = 0.5\n'
    chaos_project(workdir, "rollout_async", faults, replicates=20)
    result = _sweep(prove, "--salt", SALT, server_url=tool_server.url)
    assert result.returncode == 0, result.stderr
    rows = stored_rows(workdir / "runs")
    seen = sum(json.loads(r["meta"])["calls"].count("ConnectError") for r in rows)
    recorded = sum(len(chaos_spans(r)) for r in rows)
    assert seen == recorded > 0
    assert tool_server.total == 20 * CALLS - recorded


def test_async_def_rollouts_awaited_together_each_get_their_own_faults(
    prove, workdir: Path, tool_server
) -> None:
    faults = '[[chaos.faults]]\nkind = "connection_error"\nrate = 0.5\n'
    chaos_project(workdir, "rollout_coroutine", faults, replicates=20)
    result = _sweep(prove, "--salt", SALT, "--concurrency", "4", server_url=tool_server.url)
    assert result.returncode == 0, result.stderr
    rows = stored_rows(workdir / "runs")
    for row in rows:
        seen = json.loads(row["meta"])["calls"]
        calls = sorted(s["attributes"]["chaos.call"] for s in chaos_spans(row))
        assert [i for i, r in enumerate(seen) if r == "ConnectError"] == calls
    # The same salt gives the same placement as the sync client path in one process.
    chaos_project(workdir, "rollout_async", faults, replicates=20)
    again = _sweep(prove, "--salt", SALT, "--name", "sync", server_url=tool_server.url)
    assert again.returncode == 0, again.stderr
    sync_rows = stored_rows(workdir / "runs")

    def placement(rows: list[dict]) -> set[tuple[int, int]]:
        return {(r["seed"], s["attributes"]["chaos.call"]) for r in rows for s in chaos_spans(r)}

    assert placement(rows) == placement(sync_rows) != set()


def test_hosts_and_paths_choose_the_calls_a_fault_may_hit(prove, workdir: Path, tool_server) -> None:
    faults = (
        '[[chaos.faults]]\nkind = "http_status"\nstatus = 502\nrate = 1.0\nhosts = ["api.example.invalid"]\n'
        '[[chaos.faults]]\nkind = "timeout"\nrate = 1.0\npaths = ["/tool/3"]\n'
    )
    chaos_project(workdir, "rollout_requests", faults, replicates=10)
    result = _sweep(prove, "--salt", SALT, server_url=tool_server.url)
    assert result.returncode == 0, result.stderr
    for row in stored_rows(workdir / "runs"):
        assert json.loads(row["meta"])["calls"] == ["ok", "ok", "ok", "timeout", "ok"]
        (span,) = chaos_spans(row)
        assert span["attributes"]["chaos.fault"] == "timeout" and span["attributes"]["chaos.call"] == 3
    assert tool_server.hits["/tool/3"] == 0 and tool_server.hits["/tool/0"] == 10
