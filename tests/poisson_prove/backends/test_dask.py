"""The Dask backend through the installed sweep, on a real LocalCluster started by the run."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import assert_clean_error
from tests.poisson_prove.backends.conftest import (
    assert_exact_plan,
    assert_sweep_semantics,
    read_rows,
    sweep_args,
    write_project,
)

LOOPBACK_HEX = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1 and ::1


def test_dask_stops_resumes_and_stores_the_planned_rows_on_a_loopback_cluster(prove, workdir: Path) -> None:
    write_project(workdir, "listening", replicates=10, tables="[dask]\nn_workers = 2\nconcurrency = 4\n")
    stopped = prove(*sweep_args("--name", "dk", "--backend", "dask", "--max-rollouts", "7"))
    assert stopped.returncode == 3, stopped.stderr
    assert "on dask" in stopped.stdout
    assert len(read_rows(workdir / "prove-runs", "dk")) == 7
    result = prove("sweep", "--yes", "--max-mde", "1", "--backend", "dask", "--resume")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "Warning" not in result.stderr, result.stderr
    rows = read_rows(workdir / "prove-runs", "dk")
    assert_exact_plan(rows, cells=2, replicates=10)
    assert_sweep_semantics(rows)
    # The episodes ran in worker processes, not in the sweep, and they listened on loopback only.
    reports = list((workdir / "state").glob("listen-*"))
    assert reports, "no episode reported its worker"
    for report in reports:
        addresses = report.read_text().split()
        assert addresses, report
        assert set(addresses) <= LOOPBACK_HEX, addresses
    # The cluster's scratch space was a temporary folder, removed at the end: none in the project.
    assert not list(workdir.glob("dask-scratch-space*"))


def test_a_worker_killed_mid_sweep_loses_and_doubles_nothing(prove, workdir: Path) -> None:
    write_project(
        workdir,
        "dies_once",
        replicates=15,
        sleep=0.05,
        tables="[dask]\nn_workers = 2\nthreads_per_worker = 2\n",
    )
    result = prove(*sweep_args("--name", "killed", "--backend", "dask", "--batch-size", "4"))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "error:" not in result.stderr, result.stderr
    killed = (workdir / "state" / "killed").read_text().split()
    assert killed, "no worker was killed"
    rows = read_rows(workdir / "prove-runs", "killed")
    assert_exact_plan(rows, cells=2, replicates=15)
    assert all(r["error_kind"] is None for r in rows), [r for r in rows if r["error_kind"]]
    assert_sweep_semantics(rows)
    # The killed episode ran a second time, on a live worker, and was stored once.
    starts = {p.name: p.read_text() for p in (workdir / "state").glob("start-*")}
    assert sorted(len(v) for v in starts.values())[-1] >= 2


def test_a_scheduler_that_does_not_answer_is_refused_before_anything_is_written(
    prove, workdir: Path
) -> None:
    tables = '[dask]\naddress = "tcp://127.0.0.1:9"\nconnect_timeout = 1\n'
    write_project(workdir, "rollout", replicates=5, tables=tables)
    result = prove(*sweep_args("--name", "nowhere", "--backend", "dask"))
    assert_clean_error(result, 1, "cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert "next: check [dask] address" in result.stderr
    assert not list((workdir / "prove-runs").glob("*/manifest.json"))


def test_episode_timeout_holds_on_dask_workers(prove, workdir: Path) -> None:
    write_project(workdir, "stall", replicates=6, tables="[dask]\nn_workers = 1\nconcurrency = 4\n")
    result = prove(*sweep_args("--name", "late", "--backend", "dask", "--episode-timeout", "1"))
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "late")
    assert_exact_plan(rows, cells=2, replicates=6)
    stalled = {r["seed"] for r in rows if r["seed"] % 4 == 0}
    assert stalled, "the salt gave no stalling seed; pick another"
    assert {r["seed"] for r in rows if r["error_kind"] == "episode_timeout"} == stalled
    assert_sweep_semantics([r for r in rows if r["seed"] not in stalled])


INTRUDER = '''
import os, subprocess, sys
from poisson_prove import Episode

HERE = os.path.dirname(os.path.abspath(__file__))
TRY = """
import sys
from distributed import Client
try:
    client = Client(sys.argv[1], timeout="3s")
    print("ran", client.submit(lambda: 1).result(timeout=10))
except Exception as exc:
    print("refused", type(exc).__name__)
"""

def rollout(cfg, seed):
    from distributed import get_worker
    try:
        os.close(os.open(os.path.join(HERE, "intruder.lock"), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return Episode("ok", 1, 5, {})
    address = get_worker().scheduler.address
    # Another process on this machine, with no credentials of the sweep's, tries the scheduler.
    tried = subprocess.run([sys.executable, "-c", TRY, address], capture_output=True, text=True, timeout=90)
    with open(os.path.join(HERE, "intruder.txt"), "w") as handle:
        handle.write(address + "\\n" + tried.stdout)
    return Episode("ok", 1, 5, {})
'''


def test_another_process_cannot_use_the_sweeps_scheduler(prove, workdir: Path) -> None:
    from tests.poisson_prove.helpers import small_spec, write

    write(workdir, "intruder.py", INTRUDER)
    small_spec(workdir, target="intruder:rollout", replicates=6, extra="[dask]\nn_workers = 1\n")
    result = prove(*sweep_args("--backend", "dask"), timeout=240)
    assert result.returncode == 0, result.stderr
    address, verdict = (workdir / "intruder.txt").read_text().splitlines()[:2]
    assert address.startswith("tls://127.0.0.1:"), address
    assert verdict.startswith("refused"), verdict
