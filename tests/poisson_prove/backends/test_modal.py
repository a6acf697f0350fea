"""Modal through the installed sweep, up to the SDK boundary (a fake SDK with the same
interface first on PYTHONPATH), and against the installed `modal` itself as far as it goes
without an account."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.backends.conftest import (
    assert_exact_plan,
    assert_sweep_semantics,
    read_rows,
    sweep_args,
    write_project,
)
from tests.poisson_prove.backends.fake_sdk_kit import FAKES, HERE, sdk_events, sdk_log

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
    entries = sdk_log(log)
    assert [e["name"] for e in sdk_events(entries, "App")] == ["cli-app"]  # --app-name wins
    (function,) = sdk_events(entries, "function")
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
    (decorated,) = sdk_events(entries, "decorated")
    assert decorated["function"] == "poisson_prove.backends._attempt.run_task"
    (mapped,) = sdk_events(entries, "map")
    assert mapped["order_outputs"] is False and mapped["return_exceptions"] is True
    assert [e["state"] for e in sdk_events(entries, "run")] == ["enter", "exit"]


def test_modal_calls_lost_with_their_containers_run_again_once(prove, workdir: Path) -> None:
    write_project(workdir, "rollout", replicates=6, tables="[modal]\nconcurrency = 2\n")
    log = workdir / "sdk.log"
    env = {"PYTHONPATH": FAKES, "FAKE_SDK_LOG": str(log), "FAKE_SDK_LOSE": "3"}
    result = prove(*sweep_args("--name", "lossy", "--backend", "modal"), env=env)
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "lossy")
    assert_exact_plan(rows, cells=2, replicates=6)
    assert_sweep_semantics(rows)
    assert [m["inputs"] for m in sdk_events(sdk_log(log), "map")] == [12, 3]


def test_an_image_section_the_spec_lacks_is_refused(prove, workdir: Path) -> None:
    write_project(workdir, "rollout", replicates=5, tables=MODAL_TABLES)
    log = workdir / "sdk.log"
    result = prove(*sweep_args("--backend", "modal", "--image", "gpux"),
                   env={"PYTHONPATH": FAKES, "FAKE_SDK_LOG": str(log)})
    assert_clean_error(result, 1, "--image gpux: the spec has no [modal.gpux] table")
    assert "next: the image tables in the spec: gpu" in result.stderr
    assert not sdk_events(sdk_log(log), "App")
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
    from poisson_prove.design.conditions import condition_key
    from poisson_prove.design.seeding import episode_seed
    from poisson_prove.episode.run import Job, Task
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
