"""`sweep --pair-with RUN --stop-when-settled` SIGKILLed before its first batch keeps its rule:
the run is created with it, so the resume stops each condition where an uninterrupted sweep
stops it (the same looks, the same stops, the same rows), never running the whole plan."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import isolated_env, script_path
from tests.poisson_prove.helpers import episodes, small_spec, write

# BAD_RATE sets the failure rate; HOLD makes each process's first call wait that many seconds,
# which holds the sweep between its run's creation and its first batch, where the kills land.
TARGET = """
import os, random, time
from poisson_prove import Episode

RATE = float(os.environ.get("BAD_RATE", "0.3"))
HOLD = [float(os.environ.get("HOLD", "0"))]

def rollout(cfg, seed):
    if HOLD[0]:
        time.sleep(HOLD[0])
        HOLD[0] = 0
    rng = random.Random(seed)
    return Episode("bad" if rng.random() < RATE else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""
REPLICATES = 200
SETTLED = ["--max-mde", "0.9", "--pair-with", "before", "--stop-when-settled", "--batch-size", "20"]


def _sweep(workdir: Path, home: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [script_path("poisson-prove"), "sweep", "--yes", *args],
        cwd=workdir,
        env=isolated_env(home, {"BAD_RATE": "0.8", **env}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return out


def _run(store: Path, name: str) -> tuple[dict, dict]:
    for path in store.glob("*/manifest.json"):
        manifest = json.loads(path.read_text())
        if manifest["name"] == name:
            if not list(path.parent.glob("episodes/*.parquet")):
                return manifest, {}
            stored = episodes(store, manifest["run_id"])
            return manifest, {(r["cell"], r["replicate"]): (r["seed"], r["outcome"]) for r in stored}
    raise AssertionError(f"no run {name}")


def test_killed_before_its_first_batch_the_resume_keeps_the_rule(workdir: Path, home: Path) -> None:
    write(workdir, "agent.py", TARGET)
    small_spec(workdir, replicates=REPLICATES)
    store = workdir / "prove-runs"
    first = ("--max-mde", "0.9", "--salt", "5eed5a17", "--name", "before")
    _finished(_sweep(workdir, home, *first, BAD_RATE="0.3"))
    _finished(_sweep(workdir, home, *SETTLED, "--name", "whole"))
    whole, whole_rows = _run(store, "whole")
    assert whole["sequential"]["settled"] == 2 and whole["counts"]["done"] < 2 * REPLICATES

    seed = random.randrange(2**32)
    rng = random.Random(seed)
    before_batch = 0
    for kill in range(3):
        name = f"killed-{kill}"
        process = _sweep(workdir, home, *SETTLED, "--name", name, HOLD="0.3")
        deadline = time.monotonic() + 60
        while process.poll() is None and not any(
            json.loads(p.read_text() or "{}").get("name") == name for p in store.glob("*/manifest.json")
        ):
            assert time.monotonic() < deadline, "the run was never created"
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.2))  # a seeded instant between creation and the first batch
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        manifest, rows = _run(store, name)
        before_batch += not rows
        # The rule is in the manifest from its first write, whenever the kill came.
        assert manifest["sequential"]["stop_when_settled"] is True, f"seed {seed}"
        resumed = _sweep(workdir, home, "--resume", name, "--batch-size", "20")
        assert "stopped when settled" in _finished(resumed), f"seed {seed}"
        manifest, rows = _run(store, name)
        assert manifest["status"] == "complete", f"seed {seed}"
        assert manifest["counts"]["done"] == whole["counts"]["done"], f"seed {seed}"
        assert manifest["counts"]["settled_skipped"] == whole["counts"]["settled_skipped"], f"seed {seed}"
        for key, entry in whole["sequential"]["conditions"].items():
            got = manifest["sequential"]["conditions"][key]
            assert (got["reason"], got["stopped_at"], got["looks"]) == (
                entry["reason"], entry["stopped_at"], entry["looks"]
            ), f"seed {seed}"
        assert rows == whole_rows, f"seed {seed}"  # the same seeds and outcomes, no duplicate
    assert before_batch >= 2, f"too few kills landed before the first batch (seed {seed})"
