"""However the sweep's worker process ends, the installed `poisson-prove sweep --json` exits 3
with one `error:` line and one JSON document, keeps what was stored and records it: posix._exit,
C's _exit through ctypes, os._exit from a thread of the rollout's own, SIGTERM and SIGKILL the
rollout sends its own process. SIGTERM from outside (a CI cancel) is Ctrl-C: exit 130, partial,
`next: --resume`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import isolated_env, script_path
from tests.poisson_prove.helpers import episodes, manifests, small_spec, write

AGENT = """
import ctypes, os, posix, signal, threading, time
from poisson_prove import Episode

MODE = os.environ.get("MODE", "")

def rollout(cfg, seed):
    if cfg["x"] == "b":
        if MODE == "posix":
            posix._exit(0)
        if MODE == "ctypes":
            ctypes.CDLL(None)._exit(0)
        if MODE == "thread":
            thread = threading.Thread(target=os._exit, args=(0,))
            thread.start()
            thread.join()
        if MODE == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        if MODE == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
    if MODE == "slow":
        time.sleep(0.002)
    return Episode("ok", 1, 5, {"case_id": cfg["x"]})
"""
ENDINGS = {
    "posix": "exited with code 0",
    "ctypes": "exited with code 0",
    "thread": "called os._exit(0) in a thread of its own",
    "sigterm": "ended by SIGTERM",
    "sigkill": "ended by SIGKILL",
}


def test_every_way_the_worker_dies_is_exit_3_one_line_one_document(workdir: Path, home: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=20)
    for mode, phrase in ENDINGS.items():  # one store per ending, one subprocess each
        done = subprocess.run(
            [script_path("poisson-prove"), "--store", mode, "sweep", "--yes", "--max-mde", "1", "--json",
             "--batch-size", "1"],
            cwd=workdir, env=isolated_env(home, {"MODE": mode}), capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 3, (mode, done.stderr)
        assert "Traceback" not in done.stderr, mode
        (error,) = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert phrase in error and "(partial)" in error, (mode, error)
        assert "next: poisson-prove --store " + mode + " sweep --resume" in done.stderr, mode
        document = json.loads(done.stdout)  # the whole stdout is one document
        assert document["verdict"] == "failed" and phrase in document["error"]["message"], mode
        (manifest,) = manifests(workdir / mode)
        stored = episodes(workdir / mode) if list((workdir / mode).glob("*/episodes/*.parquet")) else []
        assert manifest["status"] == "partial", mode
        assert manifest["counts"]["done"] == len(stored) == document["counts"]["done"], mode
        assert f"{len(stored):,} of 40 rollouts kept" in error, mode
        log = next((workdir / mode).glob("*/events.jsonl")).read_text()
        events = [json.loads(line) for line in log.splitlines()]
        assert events[-1]["event"] == "stop" and events[-1]["reason"] == "process_ended", mode


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint-to-the-pid"])
def test_a_signal_from_outside_is_ctrl_c(workdir: Path, home: Path, signum: int) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=1500)
    store = workdir / "prove-runs"
    process = subprocess.Popen(
        [script_path("poisson-prove"), "sweep", "--yes", "--max-mde", "1", "--batch-size", "8"],
        cwd=workdir, env=isolated_env(home, {"MODE": "slow"}), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while process.poll() is None and not list(store.glob("*/episodes/*.parquet")):
        assert time.monotonic() < deadline, "no batch was ever written"
        time.sleep(0.01)
    os.kill(process.pid, signum)  # the command's own process only, as a CI cancel sends it
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    (error,) = [line for line in err.splitlines() if line.startswith("error: ")]
    assert error.startswith("error: interrupted: ") and "(partial)" in error
    assert "next: poisson-prove sweep --resume" in err
    (manifest,) = manifests(store)
    rows = episodes(store)
    assert manifest["status"] == "partial" and 0 < len(rows) < 3000
    assert len({(r["cell"], r["replicate"]) for r in rows}) == len(rows)
    assert f"{len(rows):,} of 3,000 rollouts kept" in error


SWITCH_INTERVAL = """
import sys
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("ok", 1, 5, {"case_id": cfg["x"], "interval": repr(sys.getswitchinterval())})
"""


def test_the_commands_episodes_run_at_the_short_switch_interval_and_the_worker_at_its_own(
    workdir: Path, home: Path
) -> None:
    """The installed command's worker runs each episode beside its batch writer at the short
    GIL switch interval (sweep.batches.quick_handoffs); what the rollout read is in the store."""
    from poisson_prove.sweep.batches import HANDOFF_INTERVAL_S

    write(workdir, "agent.py", SWITCH_INTERVAL)
    small_spec(workdir, replicates=30)
    done = subprocess.run(
        [script_path("poisson-prove"), "--store", "runs", "sweep", "--yes", "--max-mde", "1", "--json",
         "--batch-size", "7"],
        cwd=workdir, env=isolated_env(home), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["counts"]["done"] == 60
    rows = episodes(workdir / "runs")
    assert len(rows) == 60
    seen = {json.loads(row["meta"])["interval"] for row in rows}
    assert [float(text) for text in seen] == [pytest.approx(HANDOFF_INTERVAL_S)]
