"""Which backend runs episodes in the caller's own thread (the sweep's fused path)."""

from __future__ import annotations

import shutil
import sys
import uuid
from dataclasses import replace
from pathlib import Path

from poisson_prove.backends import make_executor
from poisson_prove.episode.run import Job
from tests.poisson_prove.backends.conftest import HERE


def test_only_the_sequential_local_backend_runs_episodes_in_the_caller(tmp_path: Path) -> None:
    """The sweep's fused in-process path is taken when the executor says so
    (Executor.runs_in_caller): the default local backend with a plain rollout, never under a
    timeout, for an async rollout, a pool, or a cluster."""
    module = f"fleet_{uuid.uuid4().hex[:8]}"
    shutil.copy(HERE / "fleet_agent.py", tmp_path / f"{module}.py")
    job = Job(run_id="r", target=f"{module}:rollout", spec_dir=str(tmp_path), outcomes=("ok", "fail"))
    try:
        default = make_executor("local", {})
        assert default.runs_in_caller(job)
        assert not default.runs_in_caller(replace(job, episode_timeout=5.0))
        assert not default.runs_in_caller(replace(job, target=f"{module}:arollout"))
        assert not make_executor("local", {"concurrency": 4}).runs_in_caller(job)
        assert not make_executor("local", {"mode": "threads"}).runs_in_caller(job)
        assert not make_executor("dask", {}).runs_in_caller(job)
    finally:
        sys.modules.pop(module, None)
