"""[chaos] injected in child processes and on Dask workers, and shown by inspect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.poisson_prove.chaos.conftest import FAULT, chaos_project, chaos_spans, reach_entries, stored_rows


def _faulted_ok(rows: list[dict], server_hits: int, calls: int = 5) -> int:
    recorded = 0
    for row in rows:
        seen = json.loads(row["meta"])["calls"]
        spans = chaos_spans(row)
        assert seen.count("status_429") == len(spans)
        (reach,) = reach_entries(row)  # counted where the episode ran, once
        assert reach["attributes"]["chaos.calls"] == calls
        assert reach["attributes"]["chaos.faulted"] == len(spans)
        recorded += len(spans)
    assert recorded > 0
    assert server_hits == len(rows) * calls - recorded
    return recorded


@pytest.mark.parametrize(
    "backend_args",
    [["--episode-timeout", "30"], ["--backend", "dask"]],
    ids=["children", "dask"],
)
def test_faults_are_injected_where_the_episode_runs(prove, workdir: Path, tool_server, backend_args) -> None:
    tables = "\n[dask]\nn_workers = 1\nconcurrency = 2\n" if "dask" in backend_args else ""
    chaos_project(workdir, "rollout_httpx", FAULT + tables, replicates=8)
    result = prove(
        "sweep", "--yes", "--max-mde", "1", "--store", "runs", "--salt", "abcdef12", *backend_args,
        env={"TOOL_URL": tool_server.url},
    )
    assert result.returncode == 0, result.stderr
    _faulted_ok(stored_rows(workdir / "runs"), tool_server.total)


def test_inspect_episode_shows_which_call_got_which_fault(prove, workdir: Path, tool_server) -> None:
    chaos_project(workdir, "rollout_httpx", FAULT.replace("0.4", "1.0"), replicates=4)
    result = prove(
        "sweep", "--yes", "--max-mde", "1", "--store", "runs", env={"TOOL_URL": tool_server.url}
    )
    assert result.returncode == 0, result.stderr
    shown = prove("--store", "runs", "inspect", "--episode", "x a/0")
    assert shown.returncode == 0, shown.stderr
    assert "spans 6" in shown.stdout  # the five faults, then what chaos reached
    assert shown.stdout.count("chaos throttled") == 5
    assert '"chaos.call": 4' in shown.stdout
    reach = shown.stdout.splitlines()[-1]
    assert reach.startswith("  chaos reach ")
    assert '"chaos.calls": 5' in reach and '"chaos.faulted": 5' in reach
    assert "error" in shown.stdout
