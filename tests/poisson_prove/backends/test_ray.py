"""The Ray backend on a real local Ray instance (opt-in: `pytest -m ray`, `make test-ray`).

Ray 2.60 binds its servers on every interface and turns 127.0.0.1 into the host's address, so
no ray.init argument keeps it on loopback. The sweep therefore runs inside a fresh network
namespace whose only interface is `lo` (`unshare --net`, root or CAP_SYS_ADMIN): whatever Ray
binds, nothing outside this machine can reach it. The run's own ray.shutdown() stops the
instance; the test checks no Ray process it started outlives the sweep and never stops Ray by
name.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import isolated_env, script_path
from tests.poisson_prove.backends.conftest import (
    assert_exact_plan,
    assert_sweep_semantics,
    read_rows,
    sweep_args,
    write_project,
)

pytestmark = pytest.mark.ray
RAY_COMMANDS = ("raylet", "gcs_server")


def _ray_pids() -> set[int]:
    """Pids of Ray daemons on this machine (observed only: nothing here signals them)."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / "comm").read_text().strip()
            except OSError:
                continue
            if comm in RAY_COMMANDS:
                pids.add(int(entry.name))
    return pids


def _loopback_only_namespace() -> list[str]:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip to keep Ray off the network")
    probe = subprocess.run(
        ["unshare", "--net", "ip", "link", "set", "lo", "up"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {probe.stderr.strip()}")
    return ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


def test_ray_stores_the_planned_rows_and_stops_what_it_started(workdir: Path, home: Path) -> None:
    pytest.importorskip("ray")
    wrapper = _loopback_only_namespace()
    write_project(workdir, "rollout", replicates=8, tables="[ray]\nconcurrency = 4\n")
    before = _ray_pids()
    result = subprocess.run(
        [*wrapper, script_path("poisson-prove"), *sweep_args("--name", "ry", "--backend", "ray")],
        cwd=workdir,
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "on ray" in result.stdout
    rows = read_rows(workdir / "prove-runs", "ry")
    assert_exact_plan(rows, cells=2, replicates=8)
    assert_sweep_semantics(rows)
    assert _ray_pids() <= before, "a Ray daemon the sweep started outlived it"
