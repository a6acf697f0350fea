"""A Dask cluster handed over from Python (`overrides={"client": ...}`), as dask-gateway and
Coiled give one: a real LocalCluster the caller started, its Client or the cluster object
itself; the twins equal a local run's, and a Client the caller handed over is left open."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.poisson_prove.backends.conftest import (
    SALT,
    assert_exact_plan,
    assert_sweep_semantics,
    essence,
    read_rows,
    sweep_args,
    write_project,
)

CALLER = """
import json, sys
from distributed import Client, LocalCluster
from poisson_prove import run_sweep

cluster = LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None)
client = Client(cluster)
seen = {}
run_sweep("prove.toml", store="prove-runs", name="handed-client", salt=sys.argv[1], backend="dask",
          overrides={"client": client}, max_mde=1.0)
seen["client_after_sweep"] = client.status
run_sweep("prove.toml", store="prove-runs", name="handed-cluster", salt=sys.argv[1], backend="dask",
          overrides={"client": cluster}, max_mde=1.0)
seen["cluster_workers_after_sweep"] = len(cluster.scheduler_info["workers"])
try:
    run_sweep("prove.toml", store="prove-runs", name="both", salt=sys.argv[1], backend="dask",
              overrides={"client": client, "address": "tcp://127.0.0.1:9"}, max_mde=1.0)
except Exception as error:
    seen["both"] = [type(error).__name__, str(error)]
client.close()
cluster.close()
print(json.dumps(seen))
"""


def test_a_client_or_cluster_from_python_runs_the_same_twins_and_the_client_stays_open(
    prove, workdir: Path
) -> None:
    write_project(workdir, "rollout", replicates=6)
    local = prove(*sweep_args("--name", "local"))
    assert local.returncode == 0, local.stderr
    caller = subprocess.run(
        [sys.executable, "-c", CALLER, SALT],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert caller.returncode == 0, caller.stderr
    seen = json.loads(caller.stdout.strip().splitlines()[-1])
    assert seen["client_after_sweep"] == "running"  # the caller's Client: theirs to close
    assert seen["cluster_workers_after_sweep"] == 2  # the cluster itself is never closed
    assert seen["both"][0] == "ProveError" and "name one cluster" in seen["both"][1], seen
    store = workdir / "prove-runs"
    expected = read_rows(store, "local")
    assert_exact_plan(expected, cells=2, replicates=6)
    for name in ("handed-client", "handed-cluster"):
        rows = read_rows(store, name)
        assert essence(rows) == essence(expected), name
        assert_sweep_semantics(rows)
    assert not [m for m in store.glob("*/manifest.json") if json.loads(m.read_text())["name"] == "both"]
