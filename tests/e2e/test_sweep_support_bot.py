"""The docs' support-bot flow, as a user runs it: dry-run, sweep, change the prompt, sweep
again paired with the first run, identical seeds, and the comparison's headline."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from tests.poisson_prove.sweep.helpers import write

PROMPTS = 'SYSTEM = "Answer the customer\'s ticket. Ask before refunding."\n'
SUPPORT_BOT = '''
"""A stand-in for your own agent, so this page runs as it is."""
import random
from dataclasses import dataclass

from prompts import SYSTEM

#: Each ticket, as the share of attempts on it that end unresolved.
TICKETS = {"refund": 0.30, "password": 0.10, "shipping": 0.20}


@dataclass
class Reply:
    resolved: bool
    timed_out: bool
    steps: int


def handle(ticket, temperature, seed):
    rng = random.Random(seed)
    steps = rng.randint(2, 20)
    gives_up = ticket * (1 + temperature) * (0.5 if "step by step" in SYSTEM else 1.0)
    return Reply(resolved=steps < 20 and rng.random() >= gives_up, timed_out=steps == 20, steps=steps)
'''
MY_ROLLOUT = """
from poisson_prove import Episode
from support_bot import TICKETS, handle  # your agent and its cases


def rollout(cfg, seed):
    ticket = TICKETS[cfg["ticket"]]
    reply = handle(ticket, temperature=cfg["temperature"], seed=seed)
    if reply.timed_out:
        outcome = "timeout"
    elif reply.resolved:
        outcome = "resolved"
    else:
        outcome = "unresolved"
    return Episode(outcome=outcome, t=reply.steps, horizon=20, meta={"case_id": cfg["ticket"]})
"""
SUPPORT_TOML = """
target = "my_rollout:rollout"
target_id = "support-bot"
t_unit = "steps"
replicates = 200

[axes.ticket]
type = "categorical"
values = ["refund", "password", "shipping"]

[axes.temperature]
type = "continuous"
values = [0.0, 0.7]

[declare]
outcomes = ["resolved", "unresolved", "timeout"]
failures = ["unresolved", "timeout"]
successes = ["resolved"]
"""
PLAN = "plan 1,200 rollouts of support-bot: 6 cells x 200 replicates on local, $0 (local)"


def test_support_bot_flow(prove, workdir: Path) -> None:
    write(workdir, "prompts.py", PROMPTS)
    write(workdir, "support_bot.py", SUPPORT_BOT)
    write(workdir, "my_rollout.py", MY_ROLLOUT)
    write(workdir, "support.toml", SUPPORT_TOML)

    dry = prove("sweep", "support.toml", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[:3] == [
        PLAN,
        "target my_rollout:rollout (imports, takes cfg and seed)",
        "outcomes failures: timeout, unresolved; successes: resolved",
    ]
    assert not (workdir / "prove-runs").exists()

    first = prove("sweep", "support.toml", "--yes")
    assert first.returncode == 0, first.stderr
    # The name is computed from the target_id and the (UTC) day the run was created.
    day = dt.datetime.now(dt.UTC).date().isoformat()
    name_a = f"support-bot {day} a"
    assert first.stdout.splitlines()[0] == PLAN
    assert f'done 1,200 rollouts in run "{name_a}" (complete) in ' in first.stdout

    (workdir / "prompts.py").write_text(
        'SYSTEM = "Answer the customer\'s ticket step by step. Ask before refunding."\n'
    )
    second = prove("sweep", "support.toml", "--yes", "--pair-with", "latest")
    assert second.returncode == 0, second.stderr
    done = next(line for line in second.stdout.splitlines() if line.startswith("done "))
    assert done.startswith(f'done 1,200 rollouts in run "support-bot {day} b" (complete) in ')
    assert done.endswith(f', paired with "{name_a}"')
    assert second.stdout.splitlines()[-1] == "next: poisson-prove diff"

    frame = pd.concat(
        [pd.read_parquet(p) for p in sorted((workdir / "prove-runs").glob("*/episodes/*.parquet"))]
    )
    runs = sorted(frame["run_id"].unique())
    assert len(runs) == 2
    a = frame[frame.run_id == runs[0]].set_index(["cell", "replicate"]).sort_index()
    b = frame[frame.run_id == runs[1]].set_index(["cell", "replicate"]).sort_index()
    assert len(a) == len(b) == 1200
    assert (a.index == b.index).all()
    assert (a["seed"] == b["seed"]).all()
    # The prompt change leaves fewer tickets unresolved on the same seeds.
    assert (b["outcome"] == "unresolved").sum() < (a["outcome"] == "unresolved").sum()

    diff = prove("diff")
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("safer "), diff.stdout
