"""backends/_children.py: the killable child processes that run episodes (local processes
mode, and the local backend under an episode timeout), started for real with `spawn`: each its
own session, the rollout loaded once per child, a timed-out episode's whole process group
killed with the spans it streamed kept, a child that ends its process stored as such, and
failures at import one error."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from poisson_prove.backends._children import ChildSlots, episode_tag
from poisson_prove.episode.run import Job, Task
from poisson_prove.errors import ProveError

AGENT = '''
import atexit
import os
import subprocess
import time
from pathlib import Path

from poisson_prove import Episode, record, step

HERE = Path(__file__).resolve().parent
LOADS = HERE / "loads"
with open(LOADS, "a") as handle:  # one line per import of this module
    handle.write(f"{os.getpid()}\\n")


def ok(cfg, seed):
    (HERE / f"ran-{seed}").write_text(f"{os.getpid()} {os.getsid(0)} {os.getppid()}")
    with step("answer", seed=seed):
        pass
    return Episode("ok", 1, 5, {"case_id": "c"})


def hang(cfg, seed):
    with step("before"):
        record("tool", name="search")
    with step("waiting"):
        child = subprocess.Popen(["sleep", "600"])
        (HERE / f"hung-{seed}").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(600)


def exits(cfg, seed):
    with step("last words"):
        pass
    os._exit(3)


def mixed(cfg, seed):
    """By seed: 0 answers, 1 ends its process, 2 hangs (mod 3)."""
    return (ok, exits, hang)[seed % 3](cfg, seed)


def leaves_a_note(cfg, seed):
    atexit.register(lambda: (HERE / f"atexit-{os.getpid()}").write_text("ran"))
    return ok(cfg, seed)
'''


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Job]:
    module = f"children_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    (tmp_path / "broken.py").write_text("raise RuntimeError('no config file')\n", encoding="utf-8")
    (tmp_path / "quits.py").write_text("import os\nos._exit(7)\n", encoding="utf-8")
    (tmp_path / "killed.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    yield Job(run_id="r", target=f"{module}:ok", spec_dir=str(tmp_path), outcomes=("ok", "bad"))
    sys.modules.pop(module, None)


def task(seed: int, replicate: int = 0) -> Task:
    return Task('{"p":1}', {"p": 1}, replicate, seed)


def gone(pid: int) -> bool:
    """True when the process no longer runs (absent, or a zombie awaiting its reaper)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return True
    return fields[0] in {"Z", "X"}


def soon_gone(pid: int, within: float = 20.0) -> bool:
    """`gone`, allowing the kernel its moment to deliver a SIGKILL: a process killed an instant
    ago can still show as running. Polled, with a generous bound (not a timing assertion)."""
    deadline = time.monotonic() + within
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def ran(folder: Path, seed: int) -> tuple[int, int, int]:
    pid, sid, parent = map(int, (folder / f"ran-{seed}").read_text().split())
    return pid, sid, parent


def test_a_child_runs_episodes_in_its_own_session_loading_the_rollout_once(job: Job, tmp_path: Path) -> None:
    slots = ChildSlots(job, 1)
    try:
        attempts = [slots.run(task(seed, replicate)) for replicate, seed in enumerate((10, 11, 12))]
    finally:
        slots.close(graceful=True)
    for attempt, seed in zip(attempts, (10, 11, 12), strict=True):
        assert attempt.infra is None
        assert (attempt.row["outcome"], attempt.row["seed"], attempt.row["error_kind"]) == ("ok", seed, None)
        assert [s["name"] for s in json.loads(attempt.row["spans"])] == ["answer"]
    children = {ran(tmp_path, seed) for seed in (10, 11, 12)}
    assert len(children) == 1  # one child answered all three
    ((pid, sid, parent),) = children
    assert pid != os.getpid() and parent == os.getpid()
    assert sid == pid  # the leader of its own session: a kill of its group reaches all it started
    assert (tmp_path / "loads").read_text().split() == [str(pid)]  # imported once, in the child


def test_a_timed_out_episode_is_killed_with_its_group_and_keeps_the_spans_it_streamed(
    job: Job, tmp_path: Path
) -> None:
    slots = ChildSlots(replace(job, target=job.target.replace(":ok", ":hang"), episode_timeout=2.0), 1)
    try:
        stopped = slots.run(task(4))
    finally:
        slots.close()
    row = stopped.row
    assert (row["outcome"], row["error_kind"]) == (None, "episode_timeout")
    assert row["error_message"] == "the episode ran past --episode-timeout 2 s and was stopped"
    spans = json.loads(row["spans"])
    assert [(s["name"], s["parent"]) for s in spans] == [("before", None), ("tool", 0), ("waiting", None)]
    waiting = spans[-1]
    assert waiting["status"] == "error"
    assert waiting["error"] == "episode_timeout: still running when the episode was stopped after 2 s"
    assert spans[0]["end"] is not None  # a step that had ended keeps its own end
    episode_pid, grandchild_pid = map(int, (tmp_path / "hung-4").read_text().split())
    assert soon_gone(episode_pid) and soon_gone(grandchild_pid)


def test_after_a_lost_or_killed_child_the_next_episode_gets_a_fresh_one(job: Job, tmp_path: Path) -> None:
    mixed = replace(job, target=job.target.replace(":ok", ":mixed"), episode_timeout=2.0)
    slots = ChildSlots(mixed, 1)
    try:
        rows = [slots.run(task(seed, replicate)).row for replicate, seed in enumerate((0, 3, 1, 6, 2, 9))]
    finally:
        slots.close()
    assert [row["error_kind"] for row in rows] == [None, None, "process_exit", None, "episode_timeout", None]
    assert ran(tmp_path, 0)[0] == ran(tmp_path, 3)[0]  # nothing in between: the same child
    assert ran(tmp_path, 3)[0] != ran(tmp_path, 6)[0] != ran(tmp_path, 9)[0]  # a new one after each
    lost = rows[2]
    assert lost["outcome"] is None
    assert lost["error_message"] == "the episode's process ended without a result (exit code 3)"
    (last_words,) = json.loads(lost["spans"])
    assert last_words["name"] == "last words" and last_words["status"] != "error"  # it had ended
    children = [str(ran(tmp_path, seed)[0]) for seed in (0, 6, 9)]
    assert (tmp_path / "loads").read_text().split() == children  # each child loaded the rollout once


def test_a_graceful_close_lets_each_child_end_as_a_plain_process_would(job: Job, tmp_path: Path) -> None:
    noted = replace(job, target=job.target.replace(":ok", ":leaves_a_note"))
    graceful = ChildSlots(noted, 1)
    graceful.run(task(30))
    graceful.close(graceful=True)
    killed = ChildSlots(noted, 1)
    killed.run(task(31))
    killed.close()
    graceful_pid, killed_pid = ran(tmp_path, 30)[0], ran(tmp_path, 31)[0]
    assert (tmp_path / f"atexit-{graceful_pid}").read_text() == "ran"
    assert not (tmp_path / f"atexit-{killed_pid}").exists()  # killed: its atexit hooks never ran
    assert soon_gone(graceful_pid) and soon_gone(killed_pid)


def test_a_target_that_fails_or_exits_while_importing_is_one_error(job: Job) -> None:
    for target, message in [
        ("broken:rollout", "RuntimeError: no config file"),
        ("quits:rollout", 'target "quits:rollout" called os._exit(7) while importing'),
        ("killed:rollout", 'target "killed:rollout" ended its process while importing (exit code -9)'),
    ]:
        slots = ChildSlots(replace(job, target=target), 1)
        try:
            with pytest.raises(ProveError) as caught:
                slots.run(task(40))
        finally:
            slots.close()
        assert message in caught.value.message, (target, caught.value.message)


def test_an_episodes_streamed_spans_are_told_apart_by_condition_replicate_and_seed() -> None:
    assert episode_tag(Task('{"p":1}', {"p": 1}, 3, 99)) == ('{"p":1}', 3, 99)
    assert episode_tag(task(1, 0)) != episode_tag(task(1, 1)) != episode_tag(task(2, 1))
