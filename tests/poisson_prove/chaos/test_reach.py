"""What [chaos] reached, through the installed `poisson-prove` against a real HTTP server on
127.0.0.1: each episode counts the calls it could fault and those it did, the run's manifest
holds the totals, and a run whose client chaos cannot fault says so in the done line and in
`inspect RUN`, never "injected"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.poisson_prove.chaos.conftest import (
    FAULT,
    chaos_project,
    chaos_spans,
    manifest_named,
    reach_entries,
    rows_of,
)

SALT = "5eed0c4a05"
CALLS = 5
NO_CALL = (
    "[chaos] reached no call (the rollout's HTTP client is not one chaos can fault: it faults "
    "httpx, httpx2, requests and aiohttp calls made in the episode itself, not urllib, urllib3 "
    "or raw sockets, nor calls from threads the rollout starts)"
)


def _sweep(prove, server_url: str, *args: str):
    return prove("sweep", "--yes", "--max-mde", "1", "--store", "runs", *args, env={"TOOL_URL": server_url})


def _after_done(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    done = next(i for i, line in enumerate(lines) if line.startswith("done "))
    return lines[done:]


def _rows(workdir: Path, name: str) -> list[dict]:
    run = workdir / "runs" / manifest_named(workdir / "runs", name)["run_id"]
    return rows_of(workdir / "runs", run)


def test_a_client_chaos_cannot_fault_is_said_to_reach_no_call(prove, workdir: Path, tool_server) -> None:
    # Every call would be faulted if chaos could reach it; urllib goes around every patch.
    chaos_project(workdir, "rollout_urllib", FAULT.replace("0.4", "1.0"), replicates=8)
    result = _sweep(prove, tool_server.url, "--name", "urllib", "--salt", SALT)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert NO_CALL not in result.stderr  # a line of the done report, on stdout
    ending = _after_done(result.stdout)
    assert ending[0].startswith('done 8 rollouts in run "urllib" (complete)')
    assert NO_CALL in ending
    assert not any("injected" in line for line in ending)
    assert tool_server.total == 8 * CALLS  # every call reached the server, none was faulted

    manifest = manifest_named(workdir / "runs", "urllib")
    chaos = manifest["chaos"]
    assert chaos["injected"] is False
    assert [(f["name"], f["injected"], f["hits"]) for f in chaos["faults"]] == [("throttled", False, 0)]
    assert chaos["reach"] == {"episodes": 8, "calls": 0, "faulted": 0, "clients": {}, "hits": {}}
    for row in _rows(workdir, "urllib"):
        assert chaos_spans(row) == []
        (reach,) = reach_entries(row)
        assert reach["attributes"]["chaos.calls"] == 0 and reach["attributes"]["chaos.faulted"] == 0

    shown = prove("--store", "runs", "inspect", "urllib")
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr == ""
    assert NO_CALL in shown.stdout.splitlines()
    assert "injected" not in shown.stdout

    as_json = _sweep(prove, tool_server.url, "--name", "urllib-json", "--salt", SALT, "--json")
    assert as_json.returncode == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    assert document["chaos"]["injected"] is False
    assert document["chaos"]["reach"]["calls"] == 0


def test_the_manifest_counts_the_calls_reached_and_faulted(prove, workdir: Path, tool_server) -> None:
    chaos_project(workdir, "rollout_httpx", FAULT, replicates=8)
    result = _sweep(prove, tool_server.url, "--name", "httpx", "--salt", SALT)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "[chaos] reached no call" not in result.stdout + result.stderr

    # Counted independently: the chaos entries of the stored spans and the server's own count.
    rows = _rows(workdir, "httpx")
    faulted = sum(len({s["attributes"]["chaos.call"] for s in chaos_spans(row)}) for row in rows)
    assert 0 < faulted < 8 * CALLS
    assert tool_server.total == 8 * CALLS - faulted
    for row in rows:
        seen = json.loads(row["meta"])["calls"]
        (reach,) = reach_entries(row)
        assert reach["attributes"] == {
            "chaos.calls": CALLS,
            "chaos.faulted": seen.count("status_429"),
            "chaos.clients": {"httpx": CALLS},
            "chaos.hits": {"throttled": seen.count("status_429")} if "status_429" in seen else {},
        }
    chaos = manifest_named(workdir / "runs", "httpx")["chaos"]
    assert chaos["injected"] is True
    assert chaos["faults"][0]["injected"] is True and chaos["faults"][0]["hits"] == faulted
    assert chaos["reach"] == {
        "episodes": 8,
        "calls": 8 * CALLS,
        "faulted": faulted,
        "clients": {"httpx": 8 * CALLS},
        "hits": {"throttled": faulted},
    }
    shown = prove("--store", "runs", "inspect", "httpx")
    assert shown.returncode == 0, shown.stderr
    calls = 8 * CALLS
    expected = f"chaos faulted {faulted} of {calls} calls in 8 episodes (httpx {calls}; throttled {faulted})"
    assert expected in shown.stdout.splitlines()


def test_a_paired_run_whose_client_chaos_cannot_fault_is_not_called_injected(
    prove, workdir: Path, tool_server
) -> None:
    # The audit's case: the same faults on the same calls, but the changed agent's calls go
    # through a client chaos does not reach. Its run must not read as "injected" (and so as safer).
    chaos_project(workdir, "rollout_httpx", FAULT, replicates=8)
    before = _sweep(prove, tool_server.url, "--name", "before", "--salt", SALT)
    assert before.returncode == 0, before.stderr
    after = _sweep(
        prove, tool_server.url, "--name", "after", "--pair-with", "before", "--target", "agent:rollout_urllib"
    )
    assert after.returncode == 0, after.stderr
    assert "Traceback" not in after.stderr
    assert NO_CALL in _after_done(after.stdout)
    assert NO_CALL not in before.stdout
    assert manifest_named(workdir / "runs", "before")["chaos"]["injected"] is True
    assert manifest_named(workdir / "runs", "after")["chaos"]["injected"] is False


def test_an_async_rollout_has_one_count_of_its_calls(prove, workdir: Path, tool_server) -> None:
    # An `async def` rollout's row is built after its awaited call: its calls are counted once.
    faults = '[[chaos.faults]]\nkind = "connection_error"\nrate = 0.5\n'
    chaos_project(workdir, "rollout_coroutine", faults, replicates=12)
    result = _sweep(prove, tool_server.url, "--name", "async", "--salt", SALT, "--concurrency", "4")
    assert result.returncode == 0, result.stderr
    rows = _rows(workdir, "async")
    assert len(rows) == 12
    for row in rows:
        seen = json.loads(row["meta"])["calls"]
        (reach,) = reach_entries(row)
        assert reach["attributes"]["chaos.calls"] == CALLS
        assert reach["attributes"]["chaos.faulted"] == seen.count("ConnectError") == len(chaos_spans(row))
    reach = manifest_named(workdir / "runs", "async")["chaos"]["reach"]
    assert reach["episodes"] == 12 and reach["calls"] == 12 * CALLS
    assert reach["clients"] == {"httpx": 12 * CALLS}


def test_faults_on_episodes_stopped_before_they_ended_are_still_counted(
    prove, workdir: Path, tool_server
) -> None:
    # A stopped episode has its fault entries (streamed from its child) but no accounting entry:
    # the calls its faults hit still count, so the run is not said to have reached nothing.
    chaos_project(workdir, "rollout_httpx_then_hang", FAULT.replace("0.4", "1.0"), replicates=4)
    result = _sweep(prove, tool_server.url, "--name", "stopped", "--salt", SALT, "--episode-timeout", "2")
    assert result.returncode == 3, result.stderr  # every episode ended without an outcome
    assert "error: every rollout errored (episode_timeout" in result.stderr
    assert 'done 4 rollouts in run "stopped" (complete)' in result.stdout
    assert "[chaos] reached no call" not in result.stdout
    rows = _rows(workdir, "stopped")
    assert [row["error_kind"] for row in rows] == ["episode_timeout"] * 4
    assert all(reach_entries(row) == [] and len(chaos_spans(row)) == CALLS for row in rows)
    assert tool_server.total == 0
    chaos = manifest_named(workdir / "runs", "stopped")["chaos"]
    assert chaos["injected"] is True
    calls = 4 * CALLS
    assert chaos["reach"] == {
        "episodes": 0, "calls": calls, "faulted": calls, "clients": {}, "hits": {"throttled": calls}
    }
