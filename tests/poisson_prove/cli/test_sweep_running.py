"""Running episodes through the installed script: errored rows, sys.exit, the episode timeout,
every rollout errored, the question without a terminal, runs, init, store selection, errors.log."""

from __future__ import annotations

import json
import os

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import (
    HEAVY_MODULES,
    SEEDED_TARGET,
    episodes,
    imports_of,
    manifests,
    small_spec,
    tree,
    write,
)

SALT = "00112233445566778899aabbccddeeff"

# Each seed picks one way to end; the sweep must store every one and go on.
MISBEHAVING = """
import os, sys, time
from poisson_prove import Episode

def rollout(cfg, seed):
    way = seed % 8
    if way == 0:
        raise ValueError(f"tool said no to {seed}")
    if way == 1:
        return {"outcome": "ok"}
    if way == 2:
        return Episode("exploded", 1, 5, {})
    if way == 3:
        return Episode("ok", 9, 5, {})
    if way == 4 and cfg["x"] == "b":
        sys.exit(2)
    return Episode("ok", 1, 5, {"case_id": cfg["x"]})
"""


def _kinds(rows: list[dict]) -> dict[str | None, int]:
    out: dict[str | None, int] = {}
    for row in rows:
        out[row["error_kind"]] = out.get(row["error_kind"], 0) + 1
    return out


def test_errored_rollouts_are_stored_and_the_sweep_goes_on(prove, workdir, home) -> None:
    write(workdir, "agent.py", MISBEHAVING)
    small_spec(workdir, replicates=20)
    result = prove("sweep", "--yes", "--salt", SALT, "--max-mde", "0.5")
    assert result.returncode == 0, result.stderr
    rows = episodes(workdir / "prove-runs")
    assert len(rows) == 40
    kinds = _kinds(rows)
    expected = {"ValueError", "invalid_episode", "system_exit", None}
    assert set(kinds) == expected, kinds
    by_seed = {r["seed"] % 8: r for r in rows}
    assert by_seed[0]["error_message"].startswith("tool said no to")
    assert "not poisson_prove.Episode" in by_seed[1]["error_message"]
    assert "'exploded' is not declared" in by_seed[2]["error_message"]
    assert "outside [0, horizon" in by_seed[3]["error_message"]
    assert all(r["outcome"] is None for r in rows if r["error_kind"])
    (manifest,) = manifests(workdir / "prove-runs")
    assert manifest["counts"]["errored"] == sum(v for k, v in kinds.items() if k)
    assert f"errors {manifest['counts']['errored']:,} rollouts without an outcome" in result.stdout
    runs = prove("runs")
    assert runs.returncode == 0
    header, line = runs.stdout.splitlines()
    assert header.split() == [
        "name",
        "id",
        "status",
        "done/planned",
        "no",
        "outcome",
        "salt",
        "paired",
        "with",
        "created",
    ]
    # The columns line up under the header; "no outcome" counts the rows stored without one.
    def column(name: str, following: str) -> str:
        return line[header.index(name) : header.index(following)].strip()

    errored = sum(v for k, v in kinds.items() if k)
    assert column("done/planned", "no outcome") == "40/40"
    assert column("no outcome", "salt") == str(errored)
    assert column("status", "done/planned") == "complete"
    assert SALT[:8] in line and "\x1b" not in runs.stdout
    # runs stays instant on a pipe: a complete run is listed from its manifest alone.
    stdout, imported = imports_of(["runs"], workdir, home)
    assert stdout == runs.stdout
    assert not imported & HEAVY_MODULES, sorted(imported & HEAVY_MODULES)
    listed = json.loads(prove("runs", "--json").stdout)
    assert listed["runs"][0]["errored"] == manifest["counts"]["errored"]
    assert listed["runs"][0]["salt"] == SALT


def test_every_rollout_errored_is_stored_complete_and_exits_3(prove, workdir) -> None:
    write(workdir, "agent.py", "def rollout(cfg, seed):\n    return 1 / 0\n")
    small_spec(workdir, replicates=20, values=["a"])
    result = prove("sweep", "--yes", "--max-mde", "0.5")
    assert_clean_error(result, 3, "every rollout errored (ZeroDivisionError: division by zero)")
    (manifest,) = manifests(workdir / "prove-runs")
    assert manifest["status"] == "complete"
    assert f"next: poisson-prove inspect '{manifest['name']}'" in result.stderr
    assert {r["error_kind"] for r in episodes(workdir / "prove-runs")} == {"ZeroDivisionError"}


SLOW = """
import os, time
from poisson_prove import Episode

def rollout(cfg, seed):
    if seed % 10 == 0:
        time.sleep(60)
    if seed % 10 == 1:
        os._exit(9)
    return Episode("ok", 1, 5, {"case_id": cfg["x"], "pid": os.getpid()})
"""


def test_episode_timeout_kills_the_child_and_stores_episode_timeout(prove, workdir) -> None:
    write(workdir, "agent.py", SLOW)
    small_spec(workdir, replicates=20, values=["a"])
    result = prove("sweep", "--yes", "--salt", SALT, "--max-mde", "0.5", "--episode-timeout", "1")
    assert result.returncode == 0, result.stderr
    rows = episodes(workdir / "prove-runs")
    assert len(rows) == 20
    slow = [r for r in rows if r["seed"] % 10 == 0]
    died = [r for r in rows if r["seed"] % 10 == 1]
    assert slow and all(r["error_kind"] == "episode_timeout" and r["outcome"] is None for r in slow)
    assert all(r["error_kind"] == "process_exit" for r in died)
    fine = [r for r in rows if r["outcome"] == "ok"]
    pids = {json.loads(r["meta"])["pid"] for r in fine}
    assert os.getpid() not in pids  # the episodes ran in child processes
    assert "timeout each episode in a child process, stopped after 1 s" in result.stdout


def test_no_terminal_without_yes_is_refused_and_writes_nothing(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir)
    before = tree(workdir)
    result = prove("sweep", "--max-mde", "0.5")
    assert_clean_error(result, 1, "no terminal to ask on")
    assert "next: poisson-prove sweep --max-mde 0.5 --yes" in result.stderr
    assert tree(workdir) == before
    missing = prove("sweep", "--yes", "--pair-with", "latest")
    assert_clean_error(missing, 1, "no runs in the store")
    assert tree(workdir) == before


def test_store_flag_env_global_options_and_names(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20, values=["a"])
    first = prove("--store", "elsewhere", "sweep", "--yes", "--max-mde", "0.5", "--name", "first")
    assert first.returncode == 0, first.stderr
    assert [m["name"] for m in manifests(workdir / "elsewhere")] == ["first"]
    taken = prove("--store", "elsewhere", "sweep", "--yes", "--max-mde", "0.5", "--name", "first")
    assert_clean_error(taken, 1, 'a run named "first" already exists')
    env = prove("sweep", "--yes", "--max-mde", "0.5", env={"POISSON_PROVE_STORE": str(workdir / "from-env")})
    assert env.returncode == 0, env.stderr
    (manifest,) = manifests(workdir / "from-env")
    assert manifest["name"].startswith("agent ") and manifest["name"].endswith(" a")
    assert not (workdir / "prove-runs").exists()
    # A run is reachable by name, id or latest.
    paired = prove("sweep", "--yes", "--max-mde", "0.5", "--store", "elsewhere", "--pair-with", "first")
    assert paired.returncode == 0, paired.stderr
    assert ', paired with "first"' in paired.stdout
    assert paired.stdout.splitlines()[-1] == "next: poisson-prove --store elsewhere diff"
    first_id = manifests(workdir / "elsewhere")[0]["run_id"]
    by_id = prove("sweep", "--yes", "--max-mde", "0.5", "--store", "elsewhere", "--pair-with", first_id)
    assert by_id.returncode == 0, by_id.stderr
    assert ', paired with "first"' in by_id.stdout
    latest = manifests(workdir / "elsewhere")[-1]
    assert latest["paired_with"] == first_id


def test_unexpected_failure_goes_to_the_errors_log(prove, workdir, home) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20, values=["a"])
    # A store whose lock file is a folder: nothing a user does, so an unexpected failure.
    (workdir / "odd-store" / ".store.lock").mkdir(parents=True)
    result = prove("sweep", "--yes", "--max-mde", "0.5", "--store", "odd-store")
    assert result.returncode == 70, result.stderr
    assert "Traceback" not in result.stderr
    assert "details in ~/.cache/poisson-prove/errors.log" in result.stderr
    assert "Traceback" in (home / ".cache" / "poisson-prove" / "errors.log").read_text()
    debug = prove("sweep", "--yes", "--max-mde", "0.5", "--store", "odd-store", "--debug")
    assert "Traceback" in debug.stderr


def test_remote_backend_without_its_support_is_refused(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20, values=["a"])
    before = tree(workdir)
    # No Burla account or cluster here: the SDK refuses the first batch before any episode ran,
    # so the sweep is refused (exit 1, as Modal without a token) with Burla's own reason, the
    # way out, and nothing stored: there is nothing to resume.
    result = prove("sweep", "--yes", "--max-mde", "0.5", "--backend", "burla")
    assert_clean_error(result, 1, "error: Burla did not run the batch")
    assert "next: burla login" in result.stderr
    assert tree(workdir) == before
