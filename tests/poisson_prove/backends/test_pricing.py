"""The price table behind the plan's cost estimate: the documented prices, in process and
through the installed sweep's --dry-run and --max-cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from poisson_prove.backends import estimate_cost
from poisson_prove.errors import ProveError
from tests.conftest import assert_clean_error
from tests.poisson_prove.backends.conftest import sweep_args, write_project
from tests.poisson_prove.backends.fake_sdk_kit import FAKES, sdk_events, sdk_log

# The documented Modal prices (docs/backends.md), USD per second.
MODAL_CPU_CORE_S = 0.0000131
MODAL_MEMORY_GIB_S = 0.00000222
MODAL_T4_S = 0.000164


def test_the_cost_estimate_follows_the_documented_price_table(prove, workdir: Path) -> None:
    tables = '[modal]\ncpu = 2\nmemory = 4096\ngpu = "T4"\nest_seconds = 30\n'
    write_project(workdir, "rollout", replicates=50, tables=tables)
    env = {"PYTHONPATH": FAKES}
    result = prove(*sweep_args("--backend", "modal", "--dry-run", "--json"), env=env)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)["plan"]
    per_second = 2 * MODAL_CPU_CORE_S + 4 * MODAL_MEMORY_GIB_S + MODAL_T4_S
    assert plan["cost_usd"] == pytest.approx(100 * 30 * per_second, rel=1e-9)
    text = prove(*sweep_args("--backend", "modal", "--dry-run"), env=env)
    assert text.returncode == 0, text.stderr
    assert f"on modal, ${100 * 30 * per_second:,.2f} (modal)" in text.stdout.splitlines()[0]
    # --est-seconds overrides the table; --max-cost refuses before anything starts.
    log = workdir / "sdk.log"
    refused = prove(*sweep_args("--backend", "modal", "--est-seconds", "60", "--max-cost", "0.5"),
                    env={**env, "FAKE_SDK_LOG": str(log)})
    assert_clean_error(refused, 1, "is above --max-cost")
    assert f"${100 * 60 * per_second:,.2f}" in refused.stderr
    assert not sdk_events(sdk_log(log), "App")
    assert not list((workdir / "prove-runs").glob("*/manifest.json"))


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
