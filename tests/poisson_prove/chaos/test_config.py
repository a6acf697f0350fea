"""[chaos] as the spec declares it: the plan's JSON names the faults (none injected yet), a
backend that cannot inject them and every malformed fault are refused with one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.poisson_prove.chaos.conftest import FAULT, chaos_project


def test_json_plan_names_the_faults_and_injects_nothing_yet(prove, workdir: Path, tool_server) -> None:
    chaos_project(workdir, "rollout_httpx", FAULT, replicates=8)
    result = prove("sweep", "--dry-run", "--json", "--max-mde", "1", env={"TOOL_URL": tool_server.url})
    assert result.returncode == 0, result.stderr
    chaos = json.loads(result.stdout)["chaos"]
    # `injected` says what happened: nothing has, in a plan (the run's manifest says what did).
    assert chaos["injected"] is False
    assert chaos["faults"][0]["injected"] is False
    assert chaos["faults"][0]["name"] == "throttled"
    assert chaos["faults"][0]["description"] == "http_status 429 (throttled) at 0.4"
    assert chaos["clients"] == ["httpx", "httpx (async)", "httpx2", "httpx2 (async)", "requests", "aiohttp"]
    assert "reach" not in chaos
    assert tool_server.total == 0  # a dry run makes no call


def test_a_backend_that_cannot_inject_is_refused_by_the_plan(prove, workdir: Path) -> None:
    chaos_project(workdir, "rollout_httpx", FAULT, replicates=8)
    result = prove("sweep", "--dry-run", "--max-mde", "1", "--backend", "modal", env={"TOOL_URL": "x"})
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: [chaos] cannot inject faults on --backend modal")
    assert "next: sweep with --backend local" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ('kind = "http_status"\nrate = 0.1\n', "http_status needs status"),
        ('kind = "latency"\nrate = 0.1\n', "latency needs seconds"),
        ('kind = "timeout"\nrate = 1.5\n', "rate must be a number in [0, 1]"),
        ('kind = "timeout"\nrate_axis = "nope"\n', "rate_axis 'nope' is not an axis of the spec"),
        ('kind = "timeout"\nrate = 0.1\nrate_axis = "x"\n', "give rate or rate_axis"),
        ('kind = "timeout"\nrate = 0.1\npaths = ["v1"]\n', "paths must start with /"),
        ('kind = "timeout"\nrate = 0.1\nstatus = 500\n', "status is for http_status faults only"),
    ],
)
def test_bad_faults_are_one_error_line(prove, workdir: Path, fault: str, message: str) -> None:
    chaos_project(workdir, "rollout_httpx", "[[chaos.faults]]\n" + fault, replicates=8)
    result = prove("sweep", "--dry-run", "--max-mde", "1", env={"TOOL_URL": "x"})
    assert result.returncode == 1
    assert message in result.stderr
    assert result.stderr.startswith("error: ") and "prove.toml:" in result.stderr
    assert "Traceback" not in result.stderr


def test_two_faults_with_one_name_are_refused(prove, workdir: Path) -> None:
    twice = '[[chaos.faults]]\nkind = "timeout"\nrate = 0.1\n' * 2
    chaos_project(workdir, "rollout_httpx", twice, replicates=8)
    result = prove("sweep", "--dry-run", "--max-mde", "1", env={"TOOL_URL": "x"})
    assert result.returncode == 1
    assert "two faults are both named 'timeout'" in result.stderr
    assert 'next: give each [[chaos.faults]] its own name = "..."' in result.stderr
