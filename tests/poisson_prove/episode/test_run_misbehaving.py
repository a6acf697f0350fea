"""Rollouts that misbehave in ways a plain `except Exception` does not cover, in one real sweep
of the installed `poisson-prove`: a BaseException of the rollout's own, an exception whose
__str__ raises, a meta holding a lone surrogate (UTF-8 cannot hold it), a fork that returns in
both processes (through os.fork, and through the C library's fork, which runs no at-fork
hook). Each is one errored (or, for the fork, one ordinary) episode and the sweep goes
on: exit 0, no traceback, every planned episode stored once, and the fork's copy wrote nothing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.poisson_prove.helpers import episodes, small_spec, write

AGENT = """
import ctypes
import os
from poisson_prove import Episode

class Boom(BaseException):
    pass

class Unprintable(Exception):
    def __str__(self):
        raise ValueError("str of exception fails")

def rollout(cfg, seed):
    kind = cfg["x"]
    if kind == "base":
        raise Boom("a BaseException of the rollout's own")
    if kind == "unprintable":
        raise Unprintable()
    if kind == "surrogate":
        return Episode("ok", 1, 5, {"s": "\\ud800", "case_id": "\\ud800"})
    if kind == "fork":
        if os.fork() == 0:
            open(f"forked-{os.getpid()}", "w").close()  # the child got here: it returns next
        return Episode("ok", 1, 5, {"pid": os.getpid()})
    if kind == "cfork":
        if ctypes.CDLL(None).fork() == 0:
            open(f"cforked-{os.getpid()}", "w").close()
        return Episode("ok", 1, 5, {"pid": os.getpid()})
    return Episode("ok", 1, 5, {"case_id": kind})
"""


def test_misbehaving_rollouts_are_errored_episodes_and_the_fork_copy_stops(prove, workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=5, values=["base", "unprintable", "surrogate", "fork", "fine"])
    swept = prove("sweep", "--yes", "--max-mde", "1", "--batch-size", "4", "--json", timeout=120)
    assert swept.returncode == 0, swept.stderr
    assert "Traceback" not in swept.stderr
    assert not [line for line in swept.stderr.splitlines() if line.startswith("error:")]
    document = json.loads(swept.stdout)
    assert document["counts"]["done"] == 25 and document["run"]["status"] == "complete"
    rows = episodes(workdir / "prove-runs")
    by_kind: dict[str, list[dict]] = {}
    for row in rows:
        by_kind.setdefault(row["cell"], []).append(row)  # the condition's key names its x
    assert len(rows) == len({(r["cell"], r["replicate"]) for r in rows}) == 25
    kinds = {cell: {(r["error_kind"], r["error_message"]) for r in group} for cell, group in by_kind.items()}
    (base,) = [k for c, k in kinds.items() if "base" in c]
    assert base == {("Boom", "a BaseException of the rollout's own")}
    (unprintable,) = [k for c, k in kinds.items() if "unprintable" in c]
    assert unprintable == {("Unprintable", "(its message cannot be shown: str() of it raised ValueError)")}
    (surrogate,) = [k for c, k in kinds.items() if "surrogate" in c]
    ((kind, message),) = surrogate
    assert kind == "invalid_episode" and "lone surrogate" in message
    (fork,) = [group for c, group in by_kind.items() if '"fork"' in c]
    assert {r["error_kind"] for r in fork} == {None} and {r["outcome"] for r in fork} == {"ok"}
    # Each of the 5 forks' children reached the rollout's return and was ended there: one
    # marker per fork, no batch or run of theirs, no row twice (each copy would have gone on).
    assert len(list(workdir.glob("forked-*"))) == 5
    assert len(list((workdir / "prove-runs").glob("*/manifest.json"))) == 1


def test_a_c_level_fork_is_seen_before_its_copy_writes_a_row(prove, workdir: Path) -> None:
    """The C library's fork runs no at-fork hook: its copy is seen by the pid before the episode
    loop hands its rows on. With the default batch size no other thread runs in the sweep's
    process meanwhile (a C-level fork of a process with threads can leave its copy waiting for a
    lock forever: docs/rollout-contract.md)."""
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=5, values=["cfork", "fine"])
    swept = prove("sweep", "--yes", "--max-mde", "1", "--json", timeout=120)
    assert swept.returncode == 0, swept.stderr
    document = json.loads(swept.stdout)
    assert document["counts"]["done"] == 10 and document["run"]["status"] == "complete"
    rows = episodes(workdir / "prove-runs")
    assert len(rows) == len({(r["cell"], r["replicate"]) for r in rows}) == 10
    cfork = [r for r in rows if "cfork" in r["cell"]]
    assert {r["outcome"] for r in cfork} == {"ok"} and len(cfork) == 5
    assert len({json.loads(r["meta"])["pid"] for r in cfork}) == 1  # the sweep's process wrote them
    assert any(workdir.glob("cforked-*"))
    assert len(list((workdir / "prove-runs").glob("*/manifest.json"))) == 1
