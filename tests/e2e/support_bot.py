"""The docs' support-bot project (prove-your-own-agent.md), written into a folder as a user
would have it: the agent stand-in, its prompt, the rollout and the sweep spec. Shared by the
end-to-end flows that sweep it."""

from __future__ import annotations

from pathlib import Path

PROMPTS = 'SYSTEM = "Answer the customer\'s ticket. Ask before refunding."\n'
#: The prompt change the docs make: the same seeds leave fewer tickets unresolved.
PATCHED_PROMPTS = PROMPTS.replace("ticket.", "ticket step by step.")
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
DECLARE = """
[declare]
outcomes = ["resolved", "unresolved", "timeout"]
failures = ["unresolved", "timeout"]
successes = ["resolved"]
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
""" + DECLARE


def write_file(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def write_support_bot(folder: Path) -> None:
    """prompts.py, support_bot.py, my_rollout.py and support.toml, as the docs give them."""
    for name, text in (
        ("prompts.py", PROMPTS),
        ("support_bot.py", SUPPORT_BOT),
        ("my_rollout.py", MY_ROLLOUT),
        ("support.toml", SUPPORT_TOML),
    ):
        write_file(folder, name, text)
