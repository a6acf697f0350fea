"""Burla through the installed sweep, up to the SDK boundary (a fake SDK with the same
interface first on PYTHONPATH): batches mapped, lost calls run again."""

from __future__ import annotations

from pathlib import Path

from tests.poisson_prove.backends.conftest import (
    assert_exact_plan,
    assert_sweep_semantics,
    read_rows,
    sweep_args,
    write_project,
)
from tests.poisson_prove.backends.fake_sdk_kit import FAKES, sdk_events, sdk_log


def test_burla_adapter_maps_batches_and_reruns_lost_calls(prove, workdir: Path) -> None:
    tables = '[burla]\nconcurrency = 2\ncpu = 1\nmemory = 4\nimage = "ghcr.io/me/agent:1"\n'
    write_project(workdir, "rollout", replicates=6, tables=tables)
    log = workdir / "sdk.log"
    env = {"PYTHONPATH": FAKES, "FAKE_SDK_LOG": str(log), "FAKE_SDK_LOSE": "2"}
    result = prove(*sweep_args("--name", "bu", "--backend", "burla"), env=env)
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "bu")
    assert_exact_plan(rows, cells=2, replicates=6)
    assert_sweep_semantics(rows)
    calls = sdk_events(sdk_log(log), "remote_parallel_map")
    assert [c["inputs"] for c in calls] == [12, 2]
    first = calls[0]
    assert first["max_parallelism"] == 2 and first["func_cpu"] == 1 and first["func_ram"] == 4
    assert first["image"] == "ghcr.io/me/agent:1"
    assert first["generator"] is True and first["raise_errors"] is False and first["spinner"] is False
    assert first["function"] == "run_task"
