"""backends/__init__.py imports a backend's module only when a sweep chooses it: naming the
backends, pricing a plan and building the local executor load neither Dask's, Ray's, Modal's
nor Burla's adapter (nor asyncio, nor multiprocessing); the interface and the job's types are
served on first use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import isolated_env

ADAPTERS = [f"poisson_prove.backends.{name}" for name in ("dask", "ray", "modal", "burla", "_dask_worker")]

CODE = f"""
import json, sys
import poisson_prove.backends as backends
from poisson_prove.backends import BACKENDS, estimate_cost, make_executor

def loaded():
    return sorted(name for name in {[*ADAPTERS, "asyncio", "multiprocessing"]!r} if name in sys.modules)

steps = {{"import": loaded()}}
estimate_cost("local", 100, {{}})
steps["estimate_cost"] = loaded()
steps["local"] = [type(make_executor("local", {{}})).__name__, loaded()]
steps["pool"] = [type(make_executor("local", {{"concurrency": 4}})).__name__, loaded()]
from poisson_prove.backends.base import Executor
from poisson_prove.episode.run import Job
steps["served"] = [backends.Executor is Executor, backends.Job is Job, "Task" in dir(backends)]
steps["dask"] = [type(make_executor("dask", {{}})).__name__, loaded()]
print(json.dumps([list(BACKENDS), steps]))
"""


def test_only_the_chosen_backends_module_is_imported(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, env=isolated_env(tmp_path), timeout=120
    )
    assert result.returncode == 0, result.stderr
    backends, steps = json.loads(result.stdout)
    assert backends == ["local", "modal", "burla", "dask", "ray"]
    assert steps["import"] == steps["estimate_cost"] == []
    assert steps["local"] == ["DefaultLocalExecutor", []]
    assert steps["pool"] == ["PoolExecutor", []]  # threads: no event loop
    assert steps["served"] == [True, True, True]
    name, loaded = steps["dask"]  # chosen: imported then (with its SDK, which brings asyncio)
    assert name == "DaskExecutor" and [m for m in loaded if m.startswith("poisson")] == [ADAPTERS[0]]
