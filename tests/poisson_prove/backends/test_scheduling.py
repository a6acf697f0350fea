"""The scheduling loop's rules, in process: AIMD backoff of the window, the price table."""

from __future__ import annotations

import shutil
import sys
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from poisson_prove.backends import estimate_cost, make_executor
from poisson_prove.backends._schedule import Window
from poisson_prove.conditions import condition_key
from poisson_prove.errors import ProveError
from poisson_prove.execute import Job, Task
from poisson_prove.seeding import episode_seed
from tests.poisson_prove.backends.conftest import HERE, SALT


def test_window_halves_on_infra_errors_and_grows_back_one_by_one() -> None:
    window = Window(8)
    window.on_infra_error()
    assert window.size == 4
    window.on_infra_error()
    window.on_infra_error()
    window.on_infra_error()
    assert window.size == 1 and window.smallest == 1  # never below one in flight
    for expected in (2, 3, 4, 5, 6, 7, 8, 8):
        window.on_success()
        assert window.size == expected  # back up to the ceiling the user asked for, no further


def test_a_storm_of_rate_limits_shrinks_the_pool_and_every_episode_still_lands(tmp_path: Path) -> None:
    module = f"fleet_{uuid.uuid4().hex[:8]}"
    shutil.copy(HERE / "fleet_agent.py", tmp_path / f"{module}.py")
    job = Job(run_id="r", target=f"{module}:flaky", spec_dir=str(tmp_path), outcomes=("ok", "fail"))
    tasks = [
        Task(condition_key({"p": p}), {"p": p}, r, episode_seed(SALT, condition_key({"p": p}), r))
        for p in (0.2, 0.6)
        for r in range(8)
    ]
    settings = {
        "concurrency": 8,
        "infra_errors": ["RateLimitError"],
        "infra_retries": 2,
        "infra_backoff": 0.001,
    }
    stormy, calm = make_executor("local", settings), make_executor("local", settings)
    try:
        rows = list(stormy.execute(job, iter(tasks)))
        calm_rows = list(calm.execute(replace(job, target=f"{module}:rollout"), iter(tasks)))
    finally:
        sys.modules.pop(module, None)
    planned = sorted((t.condition, t.replicate) for t in tasks)
    assert sorted((r["cell"], r["replicate"]) for r in rows) == planned
    assert sorted((r["cell"], r["replicate"]) for r in calm_rows) == planned
    assert all(r["error_kind"] is None for r in rows + calm_rows)
    assert stormy.window.smallest == 1  # halved 8 -> 4 -> 2 -> 1 while the errors came
    assert calm.window.smallest == 8  # without infrastructure errors it never shrinks


def test_burla_estimate_follows_the_documented_google_cloud_prices() -> None:
    per_second = 2 * 0.031611 / 3600 + 8 * 0.004237 / 3600 + 0.35 / 3600  # 2 vCPU, 8 GB, a T4
    settings = {"est_seconds": 12, "cpu": 2, "memory": 8, "gpu": "T4"}
    assert estimate_cost("burla", 1000, settings) == pytest.approx(1000 * 12 * per_second, rel=1e-12)
    assert estimate_cost("modal", 10, {"est_seconds": 1, "gpu": "H100:2"}) == pytest.approx(
        10 * (0.125 * 0.0000131 + 0.125 * 0.00000222 + 2 * 0.001097), rel=1e-12
    )
    for free in ("local", "dask", "ray"):
        assert estimate_cost(free, 10_000, {"est_seconds": 100}) == 0.0


def test_a_gpu_without_a_price_is_refused_with_the_priced_ones() -> None:
    with pytest.raises(ProveError) as refused:
        estimate_cost("modal", 10, {"gpu": "B300"})
    assert "gpu 'B300' is not in the price table" in refused.value.message
    assert "H100" in refused.value.suggestions[0]


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
