"""kill -9 at random moments mid-sweep, then --resume: exactly the planned set, no duplicate
(cell, replicate), no completed batch lost. Two sweeps into one store at once: both intact."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import isolated_env, script_path
from tests.poisson_prove.helpers import episodes, manifests, small_spec, write

SLOWISH = """
import random, time
from poisson_prove import Episode

def rollout(cfg, seed):
    time.sleep(0.002)
    rng = random.Random(seed)
    return Episode("bad" if rng.random() < 0.3 else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""
PLANNED = 2 * 150


def _start(workdir: Path, home: Path, *args: str) -> subprocess.Popen[bytes]:
    # A resume keeps the run's own --max-mde; a new run is given one its small design passes.
    design = [] if "--resume" in args else ["--max-mde", "0.5"]
    return subprocess.Popen(
        [script_path("poisson-prove"), "sweep", "--yes", *design, "--batch-size", "8", *args],
        cwd=workdir,
        env=isolated_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _batches(store: Path) -> int:
    return len(list(store.glob("*/episodes/*.parquet")))


def _kill_mid_sweep(process: subprocess.Popen[bytes], store: Path, rng: random.Random) -> bool:
    """SIGKILL once the run has written a new batch, after a random extra moment.
    False when the sweep finished first."""
    seen = _batches(store)
    while process.poll() is None and _batches(store) <= seen:
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.25))
    if process.poll() is not None:
        return False
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return True


def test_kill_9_then_resume_gives_exactly_the_planned_set(workdir: Path, home: Path) -> None:
    write(workdir, "agent.py", SLOWISH)
    small_spec(workdir, replicates=150)
    store = workdir / "prove-runs"
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    kept: dict[tuple[str, int], tuple[int, str | None]] = {}
    kills = 0
    process = _start(workdir, home, "--name", "killed")
    for _ in range(3):
        if not _kill_mid_sweep(process, store, rng):
            break
        kills += 1
        rows = episodes(store)
        keys = [(r["cell"], r["replicate"]) for r in rows]
        assert len(keys) == len(set(keys)), f"duplicates after kill (seed {seed})"
        for r in rows:  # nothing stored before is ever lost or changed
            kept.setdefault((r["cell"], r["replicate"]), (r["seed"], r["outcome"]))
        (manifest,) = manifests(store)
        assert manifest["status"] == "partial"
        process = _start(workdir, home, "--resume")
    assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
    assert kills >= 1, f"the sweep was never caught mid-way (seed {seed})"
    rows = episodes(store)
    final = {(r["cell"], r["replicate"]): (r["seed"], r["outcome"]) for r in rows}
    assert len(rows) == len(final) == PLANNED, f"seed {seed}"
    assert {k: final[k] for k in kept} == kept
    (manifest,) = manifests(store)
    assert manifest["status"] == "complete" and manifest["counts"]["done"] == PLANNED
    assert {key for key in final} == {(c["key"], r) for c in manifest["cells"] for r in range(150)}


def test_two_sweeps_into_one_store_at_once(workdir: Path, home: Path) -> None:
    write(workdir, "agent.py", SLOWISH)
    small_spec(workdir, replicates=150)
    first = _start(workdir, home)
    second = _start(workdir, home)
    assert first.wait(timeout=120) == 0
    assert second.wait(timeout=120) == 0
    store = workdir / "prove-runs"
    runs = manifests(store)
    assert len(runs) == 2
    # Each name carries its run's UTC day: two sweeps of one day get a and b (across midnight,
    # each day starts at a); either way the names differ.
    assert len({m["name"] for m in runs}) == 2
    for manifest in runs:
        assert manifest["name"].rsplit(" ", 2)[1] == manifest["created"][:10]
    if runs[0]["created"][:10] == runs[1]["created"][:10]:
        assert sorted(m["name"][-1] for m in runs) == ["a", "b"]
    rows = episodes(store)
    for manifest in runs:
        mine = [(r["cell"], r["replicate"]) for r in rows if r["run_id"] == manifest["run_id"]]
        assert len(mine) == len(set(mine)) == PLANNED
        assert manifest["status"] == "complete"


@pytest.mark.parametrize("timeout", [None, "30"], ids=["in-process", "episode-timeout"])
def test_ctrl_c_keeps_what_ran_and_exits_130(workdir: Path, home: Path, timeout: str | None) -> None:
    write(workdir, "agent.py", SLOWISH)
    small_spec(workdir, replicates=150)
    store = workdir / "prove-runs"
    extra = ["--episode-timeout", timeout] if timeout else []
    process = subprocess.Popen(
        [script_path("poisson-prove"), "sweep", "--yes", "--max-mde", "0.5", "--batch-size", "8", *extra],
        cwd=workdir,
        env=isolated_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches it
    )
    while process.poll() is None and _batches(store) == 0:
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert any(line.startswith("stopped ") and "(partial)" in line for line in out.splitlines()), out
    assert "Traceback" not in err
    (error,) = [line for line in err.splitlines() if line.startswith("error: ")]
    assert error.startswith("error: interrupted: ") and "(partial)" in error
    assert "next: poisson-prove sweep --resume" in err
    (manifest,) = manifests(store)
    rows = episodes(store)
    assert manifest["status"] == "partial" and 0 < len(rows) < PLANNED
    assert f"{len(rows):,} of {PLANNED} rollouts kept" in error
    assert len({(r["cell"], r["replicate"]) for r in rows}) == len(rows)


GATED = """
import os, time
from poisson_prove import Episode

calls = [0]

def rollout(cfg, seed):
    calls[0] += 1
    while calls[0] > 20 and not os.path.exists("gate"):  # hold the sweep open mid-run
        time.sleep(0.01)
    return Episode("ok", 1, 5, {"case_id": cfg["x"]})
"""


def test_resume_of_a_run_still_being_written_is_refused(workdir: Path, home: Path) -> None:
    write(workdir, "agent.py", GATED)
    small_spec(workdir, replicates=150)
    store = workdir / "prove-runs"
    running = _start(workdir, home, "--name", "busy")
    try:
        while running.poll() is None and _batches(store) == 0:
            time.sleep(0.01)
        second = _start(workdir, home, "--resume")
        _, err = second.communicate(timeout=60)
        assert second.returncode == 1, err
        assert b'error: run "busy" is being written by another sweep right now' in err
    finally:
        (workdir / "gate").write_text("open")
    assert running.wait(timeout=120) == 0
    rows = episodes(store)
    assert len(rows) == len({(r["cell"], r["replicate"]) for r in rows}) == PLANNED


def test_kill_9_with_default_batches_keeps_whole_timed_batches(workdir: Path, home: Path) -> None:
    """Default options: batches are written about once a second (the default size never fills
    here). A SIGKILL after the first one keeps whole batches only, and the resume is exact."""
    import pyarrow.parquet as pq

    write(workdir, "agent.py", SLOWISH)
    small_spec(workdir, replicates=600)  # 1,200 episodes of 2 ms: about three seconds
    store = workdir / "prove-runs"
    command = [script_path("poisson-prove"), "sweep", "--yes", "--max-mde", "0.5"]
    process = subprocess.Popen(command, cwd=workdir, env=isolated_env(home), stdout=subprocess.DEVNULL)
    assert _kill_mid_sweep(process, store, random.Random(7)), "the sweep ended before a batch"
    files = sorted(store.glob("*/episodes/*.parquet"))
    sizes = [pq.ParquetFile(path).metadata.num_rows for path in files]
    assert files and all(0 < size < 1200 for size in sizes), sizes
    events = [json.loads(line) for line in next(store.glob("*/events.jsonl")).read_text().splitlines()]
    written = {e["file"]: e["rows"] for e in events if e.get("event") == "batch"}
    assert all(written.get(path.name, size) == size for path, size in zip(files, sizes, strict=True))
    assert len(episodes(store)) == sum(sizes)
    resumed = subprocess.run(
        [*command[:3], "--resume"], cwd=workdir, env=isolated_env(home), capture_output=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    rows = episodes(store)
    assert len(rows) == len({(r["cell"], r["replicate"]) for r in rows}) == 1200
    assert not list(store.glob("*/episodes/*.tmp"))
