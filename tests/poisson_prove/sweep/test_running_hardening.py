"""Defects found by trying to break the sweep, each through the installed script: a target that
calls os._exit, meta JSON cannot hold, orphans of a timed-out episode, huge designs, batches
written when full or after a second."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import episodes, manifests, small_spec, write

SALT = "00112233445566778899aabbccddeeff"

AGENTS = """
import math, os, subprocess, sys, time
from poisson_prove import Episode

def exits(cfg, seed):
    if seed % 7 == 3:
        os._exit(0)
    return Episode("ok", 1, 5, {})

def meta_object(cfg, seed):
    return Episode("ok", 1, 5, {"x": object()})

def meta_nan(cfg, seed):
    return Episode("ok", 1, 5, {"x": math.nan, "y": [math.inf]})

def meta_fine(cfg, seed):
    return Episode("ok", 1, 5, {"x": [1, 2.5, None, "é"], "case_id": cfg["x"]})

def spawns_and_hangs(cfg, seed):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    os.makedirs("pids", exist_ok=True)
    with open(f"pids/{seed}", "w") as handle:
        handle.write(str(child.pid))
    time.sleep(120)

def warns(cfg, seed):
    import warnings
    warnings.warn("the tool is deprecated\\nsecond line", DeprecationWarning if seed < 0 else RuntimeWarning)
    return Episode("ok", 1, 5, {})

def slow(cfg, seed):
    time.sleep(0.05)
    return Episode("ok", 1, 5, {})
"""


@pytest.fixture
def agents(workdir: Path) -> Path:
    write(workdir, "agents.py", AGENTS)
    return small_spec(workdir, target="agents:exits", replicates=20)


def _sweep(prove, *args: str):
    return prove("sweep", "--yes", "--salt", SALT, "--max-mde", "1", *args)


@pytest.mark.parametrize("json_mode", [False, True])
def test_os_exit_in_a_rollout_stops_the_sweep_with_exit_3(prove, workdir, agents, json_mode) -> None:
    result = _sweep(prove, *(["--json"] if json_mode else []))
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert "called os._exit(0) in episode" in result.stderr
    assert "next: poisson-prove sweep --resume --episode-timeout 600" in result.stderr
    rows = episodes(workdir / "prove-runs")
    kinds = [r["error_kind"] for r in rows]
    assert kinds.count("process_exit") == 1  # the episode that ended it, and nothing after it
    (manifest,) = manifests(workdir / "prove-runs")
    assert manifest["status"] == "partial"
    if json_mode:
        document = json.loads(result.stdout)
        assert document["verdict"] == "failed"
        assert "os._exit(0)" in document["error"]["message"]
    # The resume skips the stored process_exit episode and goes on; each later os._exit stops
    # it again, until --episode-timeout runs the episodes in children of their own.
    again = prove("sweep", "--resume", "--yes", "--episode-timeout", "30")
    assert again.returncode == 0, again.stderr
    rows = episodes(workdir / "prove-runs")
    assert len(rows) == len({(r["cell"], r["replicate"]) for r in rows}) == 40
    assert {r["error_kind"] for r in rows} == {None, "process_exit"}


def test_os_exit_while_importing_is_refused(prove, workdir) -> None:
    write(workdir, "dies.py", "import os\nos._exit(0)\n")
    small_spec(workdir, target="dies:rollout", replicates=20)
    for extra in ([], ["--json"]):
        result = _sweep(prove, *extra)
        assert_clean_error(result, 1, 'target "dies:rollout" called os._exit(0) while importing')
    assert not (workdir / "prove-runs").exists()


@pytest.mark.parametrize("target", ["meta_object", "meta_nan"])
@pytest.mark.parametrize("timeout", [[], ["--episode-timeout", "20"]])
def test_meta_json_cannot_hold_is_an_invalid_episode(prove, workdir, agents, target, timeout) -> None:
    result = _sweep(prove, "--target", f"agents:{target}", *timeout)
    assert_clean_error(result, 3, "every rollout errored (invalid_episode: meta cannot be stored as JSON")
    rows = episodes(workdir / "prove-runs")
    assert len(rows) == 40
    assert {r["error_kind"] for r in rows} == {"invalid_episode"}
    assert all(r["meta"] is None and r["outcome"] is None for r in rows)


def test_valid_meta_is_strict_json(prove, workdir, agents) -> None:
    result = _sweep(prove, "--target", "agents:meta_fine")
    assert result.returncode == 0, result.stderr
    for row in episodes(workdir / "prove-runs"):
        meta = json.loads(row["meta"], parse_constant=lambda name: pytest.fail(f"{name} in meta"))
        assert meta["x"] == [1, 2.5, None, "é"]


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its parent entry is left


def test_a_timed_out_episode_leaves_no_orphan_process(prove, workdir, agents) -> None:
    result = prove(
        "sweep", "--yes", "--max-mde", "1", "--target", "agents:spawns_and_hangs",
        "--replicates", "5", "--max-rollouts", "2", "--episode-timeout", "1",
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    pids = [int(p.read_text()) for p in (workdir / "pids").iterdir()]
    assert len(pids) == 2
    alive = [pid for pid in pids if _running(pid)]
    for pid in alive:  # ours: started by this test's sweep
        os.kill(pid, 9)
    assert not alive, "the episode's own child outlived the timeout"


def test_huge_replicates_are_refused_and_max_rollouts_bounds_the_work(prove, workdir, agents) -> None:
    result = _sweep(prove, "--target", "agents:meta_fine", "--replicates", "100000000000")
    assert_clean_error(
        result, 1, "rollouts (2 conditions x 100,000,000,000 replicates)", "at most 1,000,000,000"
    )
    assert not (workdir / "prove-runs").exists()
    # Half a billion seeds per condition: derived a block at a time, so ten rollouts are quick.
    result = _sweep(
        prove, "--target", "agents:meta_fine", "--replicates", "400000000", "--max-rollouts", "10"
    )
    assert result.returncode == 3, result.stderr
    assert len(episodes(workdir / "prove-runs")) == 10


def test_a_batch_is_written_after_a_second_even_when_not_full(prove, workdir, agents) -> None:
    # 60 episodes of 50 ms: three seconds. The default batch (10,000 rows) never fills, so
    # the rows are written about once a second instead of all at the end.
    result = _sweep(prove, "--target", "agents:slow", "--replicates", "30")
    assert result.returncode == 0, result.stderr
    (events,) = (workdir / "prove-runs").glob("*/events.jsonl")
    written = [e for e in map(json.loads, events.read_text().splitlines()) if e["event"] == "batch"]
    assert len(written) >= 2, written  # then compacted into one file, as the run is complete
    assert len(episodes(workdir / "prove-runs")) == 60


def test_python_warnings_are_one_line(prove, workdir, agents) -> None:
    result = _sweep(prove, "--target", "agents:warns")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "warning: the tool is deprecated" in lines
    assert not [line for line in lines if "warnings.warn(" in line or "agents.py:" in line], lines
    assert "second line" not in result.stderr


HIDDEN_SDKS = Path(__file__).parents[1] / "backends" / "hidden_sdks"


def test_dry_run_checks_the_backend_as_the_run_would(prove, workdir, agents) -> None:
    pytest.importorskip("modal")
    no_token = {"MODAL_TOKEN_ID": "", "MODAL_TOKEN_SECRET": ""}
    for extra in ([], ["--json"]):
        result = prove("sweep", "--dry-run", "--max-mde", "1", "--backend", "modal", *extra, env=no_token)
        assert_clean_error(result, 1, "--backend modal: no Modal token on this machine")
        if extra:
            assert json.loads(result.stdout)["verdict"] == "refused"
    token = {"MODAL_TOKEN_ID": "ak-never-sent", "MODAL_TOKEN_SECRET": "as-never-sent"}
    result = prove(
        "sweep", "--dry-run", "--max-mde", "1", "--backend", "modal", "--image", "nosuch", env=token
    )
    assert_clean_error(result, 1, "--image nosuch: the spec has no [modal.nosuch] table")
    hidden = {"PYTHONPATH": os.pathsep.join([str(HIDDEN_SDKS), os.environ.get("PYTHONPATH", "")])}
    for backend in ("modal", "burla", "dask"):
        result = prove("sweep", "--dry-run", "--max-mde", "1", "--backend", backend, env=hidden)
        assert_clean_error(result, 1, f"--backend {backend} needs the {backend} extra")
    assert not (workdir / "prove-runs").exists()
