"""Modal and Burla through the installed sweep, up to the SDK boundary: a fake SDK with the
same interface stands first on PYTHONPATH (no account, no network), logs what the adapter
asked of it, and runs the calls locally. Also: the cost estimate, --max-cost, missing extras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.backends.conftest import (
    assert_exact_plan,
    assert_sweep_semantics,
    read_rows,
    sweep_args,
    write_project,
)

HERE = Path(__file__).resolve().parent
FAKES = str(HERE / "fake_sdks")
HIDDEN = str(HERE / "hidden_sdks")

# The documented Modal prices (docs/backends.md), USD per second.
MODAL_CPU_CORE_S = 0.0000131
MODAL_MEMORY_GIB_S = 0.00000222
MODAL_T4_S = 0.000164


def _log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _events(log: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [entry for entry in log if entry["event"] == name]


MODAL_TABLES = """
[modal]
app_name = "from-spec"
concurrency = 3
cpu = 0.5
memory = 512
est_seconds = 2
infra_errors = ["RateLimitError"]
infra_backoff = 0.01

[modal.gpu]
python_version = "3.11"
pip = ["httpx>=0.27"]
env = { AGENT_MODE = "eval" }
"""


def test_modal_adapter_builds_the_app_and_streams_every_row(prove, workdir: Path) -> None:
    write_project(workdir, "flaky", replicates=6, tables=MODAL_TABLES)
    log = workdir / "sdk.log"
    env = {"PYTHONPATH": FAKES, "FAKE_SDK_LOG": str(log)}
    result = prove(*sweep_args("--name", "md", "--backend", "modal", "--image", "gpu",
                               "--app-name", "cli-app", "--infra-retries", "3"), env=env)
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "md")
    assert_exact_plan(rows, cells=2, replicates=6)
    assert_sweep_semantics(rows)  # two rate limits per episode were retried inside the call
    entries = _log(log)
    assert [e["name"] for e in _events(entries, "App")] == ["cli-app"]  # --app-name wins
    (function,) = _events(entries, "function")
    options = function["options"]
    assert options["serialized"] is True
    assert options["max_containers"] == 3 and options["cpu"] == 0.5 and options["memory"] == 512
    assert options["retries"].startswith("Retries(max_retries=3")
    image = {op: value for op, value in function["image"]}
    assert image["debian_slim"] == "3.11"
    assert "httpx>=0.27" in image["pip_install"]
    assert any(p.startswith("pyarrow") for p in image["pip_install"])  # poisson-prove's own deps
    assert image["env"] == {"AGENT_MODE": "eval"}
    assert image["add_local_python_source"] == ["poisson_prove"]
    assert image["add_local_dir"] == [str(workdir), "/root/prove-project"]
    assert function["image"][-1][0] == "add_local_dir"  # local files last, as Modal requires
    (decorated,) = _events(entries, "decorated")
    assert decorated["function"] == "poisson_prove.backends._attempt.run_task"
    (mapped,) = _events(entries, "map")
    assert mapped["order_outputs"] is False and mapped["return_exceptions"] is True
    assert [e["state"] for e in _events(entries, "run")] == ["enter", "exit"]


def test_modal_calls_lost_with_their_containers_run_again_once(prove, workdir: Path) -> None:
    write_project(workdir, "rollout", replicates=6, tables="[modal]\nconcurrency = 2\n")
    log = workdir / "sdk.log"
    env = {"PYTHONPATH": FAKES, "FAKE_SDK_LOG": str(log), "FAKE_SDK_LOSE": "3"}
    result = prove(*sweep_args("--name", "lossy", "--backend", "modal"), env=env)
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "lossy")
    assert_exact_plan(rows, cells=2, replicates=6)
    assert_sweep_semantics(rows)
    assert [m["inputs"] for m in _events(_log(log), "map")] == [12, 3]


def test_an_image_section_the_spec_lacks_is_refused(prove, workdir: Path) -> None:
    write_project(workdir, "rollout", replicates=5, tables=MODAL_TABLES)
    log = workdir / "sdk.log"
    result = prove(*sweep_args("--backend", "modal", "--image", "gpux"),
                   env={"PYTHONPATH": FAKES, "FAKE_SDK_LOG": str(log)})
    assert_clean_error(result, 1, "--image gpux: the spec has no [modal.gpux] table")
    assert "next: the image tables in the spec: gpu" in result.stderr
    assert not _events(_log(log), "App")
    assert not list((workdir / "prove-runs").glob("*/manifest.json"))


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
    assert not _events(_log(log), "App")
    assert not list((workdir / "prove-runs").glob("*/manifest.json"))


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
    calls = _events(_log(log), "remote_parallel_map")
    assert [c["inputs"] for c in calls] == [12, 2]
    first = calls[0]
    assert first["max_parallelism"] == 2 and first["func_cpu"] == 1 and first["func_ram"] == 4
    assert first["image"] == "ghcr.io/me/agent:1"
    assert first["generator"] is True and first["raise_errors"] is False and first["spinner"] is False
    assert first["function"] == "run_task"


@pytest.mark.parametrize("backend", ["modal", "burla", "dask", "ray"])
def test_a_missing_extra_is_refused_with_the_pip_line(prove, workdir: Path, backend: str) -> None:
    write_project(workdir, "rollout", replicates=5)
    result = prove(*sweep_args("--backend", backend), env={"PYTHONPATH": HIDDEN})
    assert_clean_error(result, 1, f"--backend {backend} needs the {backend} extra")
    assert f"next: pip install 'poisson-prove[{backend}]'" in result.stderr
    assert not list((workdir / "prove-runs").glob("*/manifest.json"))


def test_the_real_modal_sdk_takes_the_adapters_image_and_function_and_runs_it_locally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against the installed `modal` itself, as far as it goes without an account: the image
    steps and function options are accepted, Function.local() runs an episode, and without a
    token the sweep is refused before anything is written (next test)."""
    import shutil
    import sys
    import uuid

    pytest.importorskip("modal")
    from poisson_prove.backends._attempt import run_task
    from poisson_prove.backends.modal import ModalExecutor
    from poisson_prove.conditions import condition_key
    from poisson_prove.execute import Job, Task
    from poisson_prove.seeding import episode_seed
    from tests.poisson_prove.backends.conftest import SALT

    module = f"fleet_{uuid.uuid4().hex[:8]}"
    shutil.copy(HERE / "fleet_agent.py", tmp_path / f"{module}.py")
    import modal

    # A token id is all the adapter's check reads; Function.local() never contacts Modal.
    monkeypatch.setenv("MODAL_TOKEN_ID", "ak-never-sent")
    monkeypatch.setenv("MODAL_TOKEN_SECRET", "as-never-sent")
    settings = {"concurrency": 3, "cpu": 0.5, "memory": 512, "gpu": "T4", "timeout": 60,
                "gpu_image": {"pip": ["httpx"], "env": {"A": "1"}}, "image": "gpu_image"}
    executor = ModalExecutor(settings, sdk=modal)
    job = Job(run_id="r", target=f"{module}:rollout", spec_dir=str(tmp_path), outcomes=("ok", "fail"))
    image = executor.build_image(job)
    assert isinstance(image, modal.Image)
    function = modal.App("prove-test").function(image=image, **executor.function_options())(run_task)
    cell = condition_key({"p": 0.6})
    task = Task(cell, {"p": 0.6}, 3, episode_seed(SALT, cell, 3))
    try:
        attempt = function.local(task, job=job, retries=0, backoff_s=0.0)
    finally:
        sys.modules.pop(module, None)
    assert attempt.infra is None
    assert_sweep_semantics([attempt.row])


def test_without_a_modal_token_the_sweep_is_refused_before_anything_is_written(prove, workdir: Path) -> None:
    pytest.importorskip("modal")
    write_project(workdir, "rollout", replicates=5)
    result = prove(*sweep_args("--backend", "modal"), env={"MODAL_TOKEN_ID": "", "MODAL_TOKEN_SECRET": ""})
    assert_clean_error(result, 1, "--backend modal: no Modal token on this machine")
    assert "next: modal token new" in result.stderr
    assert not list((workdir / "prove-runs").glob("*/manifest.json"))
