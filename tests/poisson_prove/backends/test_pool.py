"""Local concurrency through the installed `poisson-prove sweep`: threads, one event loop,
killable child processes, infrastructure retries, stopping and Ctrl-C.

Rows are checked two ways: against a sequential sweep of the same spec and salt, and against
the agent's own (cfg, seed) -> outcome function with seeds recomputed from the salt."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import isolated_env, script_path
from tests.poisson_prove.backends.conftest import (
    assert_exact_plan,
    assert_sweep_semantics,
    essence,
    read_rows,
    sweep_args,
    write_project,
)


def test_concurrency_stores_the_same_rows_as_sequential(prove, workdir: Path) -> None:
    write_project(workdir, "rollout", replicates=12)
    seq = prove(*sweep_args("--name", "seq"))
    assert seq.returncode == 0, seq.stderr
    par = prove(*sweep_args("--name", "par", "--concurrency", "8"))
    assert par.returncode == 0, par.stderr
    assert "concurrency 8" in par.stdout
    store = workdir / "prove-runs"
    rows_seq, rows_par = read_rows(store, "seq"), read_rows(store, "par")
    assert_exact_plan(rows_par, cells=2, replicates=12)
    assert essence(rows_par) == essence(rows_seq)
    assert_sweep_semantics(rows_par)


def test_threads_really_run_n_at_once(prove, workdir: Path) -> None:
    # `together` returns only when four episodes wait at once; one at a time it would time out.
    write_project(workdir, "together", replicates=8, tables="[local]\nconcurrency = 4\n")
    result = prove(*sweep_args("--name", "four"))
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "four")
    assert_exact_plan(rows, cells=2, replicates=8)
    assert all(r["error_kind"] is None for r in rows), rows
    assert_sweep_semantics(rows)


def test_async_rollouts_run_together_on_one_event_loop(prove, workdir: Path) -> None:
    # Four coroutines must meet at an asyncio.Barrier: they run at once, on one loop, one thread.
    write_project(workdir, "atogether", replicates=8)
    result = prove(*sweep_args("--name", "met", "--concurrency", "4"))
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "met")
    assert_exact_plan(rows, cells=2, replicates=8)
    assert all(r["error_kind"] is None for r in rows), rows
    assert_sweep_semantics(rows)
    state = workdir / "state"
    assert (state / "loops").read_text() == "1"
    assert len(list(state.glob("thread-*"))) == 1


def test_async_rollouts_are_awaited_at_the_default_concurrency_too(prove, workdir: Path) -> None:
    write_project(workdir, "arollout", replicates=5)
    plain = prove(*sweep_args("--name", "one"))
    assert plain.returncode == 0, plain.stderr
    # Under --episode-timeout the episodes run in a child process, which awaits them as well.
    timed = prove(*sweep_args("--name", "timed", "--episode-timeout", "30"))
    assert timed.returncode == 0, timed.stderr
    for name in ("one", "timed"):
        rows = read_rows(workdir / "prove-runs", name)
        assert_exact_plan(rows, cells=2, replicates=5)
        assert all(r["error_kind"] is None for r in rows), rows
        assert_sweep_semantics(rows)


def _gone(pid: int) -> bool:
    """True when the process no longer runs (absent, or a zombie awaiting its reaper)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return True
    return fields[0] in {"Z", "X"}


def test_episode_timeout_kills_hanging_children_for_real(prove, workdir: Path) -> None:
    write_project(workdir, "hang", replicates=6)
    result = prove(*sweep_args("--name", "hung", "--concurrency", "4", "--episode-timeout", "1"))
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "hung")
    assert_exact_plan(rows, cells=2, replicates=6)
    hung = {r["seed"] for r in rows if r["seed"] % 4 == 0}
    exited = {r["seed"] for r in rows if r["seed"] % 4 == 1}
    assert hung and exited, "the salt gave no hanging or exiting seed; pick another"
    assert {r["seed"] for r in rows if r["error_kind"] == "episode_timeout"} == hung
    # A process that ends under its episode is that episode's error, and the sweep goes on.
    assert {r["seed"] for r in rows if r["error_kind"] == "process_exit"} == exited
    assert all(r["outcome"] is None for r in rows if r["seed"] in hung | exited)
    assert_sweep_semantics([r for r in rows if r["seed"] not in hung | exited])
    # Each hanging episode's process and the program it started were killed.
    for seed in hung:
        episode_pid, grandchild_pid = map(int, (workdir / "state" / f"hung-{seed}").read_text().split())
        assert _gone(episode_pid) and _gone(grandchild_pid), seed


def test_named_infrastructure_errors_are_retried_not_stored(prove, workdir: Path) -> None:
    tables = (
        "[local]\nconcurrency = 4\ninfra_errors = [\"RateLimitError\"]\n"
        "infra_retries = 3\ninfra_backoff = 0.01\n"
    )
    write_project(workdir, "flaky", replicates=6, tables=tables)
    result = prove(*sweep_args("--name", "flaky"))
    assert result.returncode == 0, result.stderr
    rows = read_rows(workdir / "prove-runs", "flaky")
    assert_exact_plan(rows, cells=2, replicates=6)
    assert all(r["error_kind"] is None for r in rows), rows
    assert_sweep_semantics(rows)  # the rows of an agent that was never throttled
    for r in rows:  # three attempts each: two rate-limited, one answered
        assert (workdir / "state" / f"attempt-{r['seed']}").read_text() == "xxx"


def test_spent_retries_are_infrastructure_and_other_errors_are_the_agents(prove, workdir: Path) -> None:
    tables = (
        "[local]\nconcurrency = 2\ninfra_errors = [\"fleet.Throttled\"]\n"
        "infra_retries = 2\ninfra_backoff = 0.01\n"
    )
    write_project(workdir, "troubled", replicates=5, tables=tables)
    # --infra-retries overrides the table; it counts per episode, whatever the batch size.
    result = prove(*sweep_args("--name", "spent", "--infra-retries", "1", "--batch-size", "3"))
    assert result.returncode == 3, (result.stdout, result.stderr)  # every rollout errored
    rows = read_rows(workdir / "prove-runs", "spent")
    assert_exact_plan(rows, cells=2, replicates=5)
    for r in rows:
        assert r["outcome"] is None
        attempts = (workdir / "state" / f"attempt-{r['seed']}").read_text()
        if r["cell"] == '{"p":0.2}':  # throttled: 1 attempt + 1 retry, then infrastructure
            assert r["error_kind"] == "infrastructure"
            assert r["error_message"] == "Throttled: quota exhausted (after 1 retry)"
            assert attempts == "xx"
        else:  # the agent's own ValueError: stored as its failure, never retried
            assert r["error_kind"] == "ValueError"
            assert attempts == "x"


def test_max_rollouts_stops_the_pool_and_keeps_exactly_what_ran(prove, workdir: Path) -> None:
    write_project(workdir, "slow", replicates=10, tables="[local]\nconcurrency = 4\n")
    result = prove(*sweep_args("--name", "cut", "--max-rollouts", "6", "--batch-size", "2"))
    assert result.returncode == 3, result.stderr
    rows = read_rows(workdir / "prove-runs", "cut")
    assert len(rows) == 6 and len({(r["cell"], r["replicate"]) for r in rows}) == 6
    # In flight when it stopped: at most the 4 slots beyond the 6 kept, none started later.
    assert len(list((workdir / "state").glob("start-*"))) <= 6 + 4


def test_ctrl_c_keeps_what_ran_and_resume_completes_the_plan(workdir: Path, home: Path) -> None:
    write_project(workdir, "slow", replicates=12, tables="[local]\nconcurrency = 4\n")
    process = subprocess.Popen(
        [script_path("poisson-prove"), *sweep_args("--name", "cc", "--batch-size", "2")],
        cwd=workdir,
        env=isolated_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    state = workdir / "state"
    deadline = time.monotonic() + 60
    while len(list(state.glob("start-*"))) < 8 and process.poll() is None:
        assert time.monotonic() < deadline, "the sweep never got going"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    partial = read_rows(workdir / "prove-runs", "cc")
    assert len(partial) < 24
    assert len({(r["cell"], r["replicate"]) for r in partial}) == len(partial)
    resumed = subprocess.run(
        [script_path("poisson-prove"), "sweep", "--yes", "--max-mde", "1", "--resume"],
        cwd=workdir,
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    rows = read_rows(workdir / "prove-runs", "cc")
    assert_exact_plan(rows, cells=2, replicates=12)
    assert_sweep_semantics(rows)
