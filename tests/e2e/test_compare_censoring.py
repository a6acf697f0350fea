"""Starred shares end to end: a real sweep whose episodes report their own, shorter horizons.

The after rollout gives every third episode a budget of 10 steps (and others 20 or 30): an
episode that reaches its budget of 10 is still running as far as the common horizon (20)
goes, so it is censored there and the shares of its condition are starred, on a pipe and
in the JSON document.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.e2e.support_bot import DECLARE, write_file

ROLLOUT = """
import random

from poisson_prove import Episode


def _episode(seed, budget, give_up):
    rng = random.Random(seed)
    steps = rng.randint(1, 34)
    if steps >= budget:
        return Episode(outcome="timeout", t=budget, horizon=budget)
    outcome = "unresolved" if rng.random() < give_up else "resolved"
    return Episode(outcome=outcome, t=steps, horizon=budget)


def before(cfg, seed):
    return _episode(seed, 20, cfg["give_up"])


def after(cfg, seed):
    return _episode(seed, (10, 20, 30)[seed % 3], cfg["give_up"])
"""
SALT = "b0d9e7000000000000000000000000c3"
SPEC = """
target = "budget_rollout:before"
target_id = "budget-bot"
t_unit = "steps"
replicates = 90

[axes.give_up]
type = "continuous"
values = [0.1, 0.4]
""" + DECLARE


def test_episodes_cut_off_by_their_own_horizon_are_starred(prove, workdir: Path) -> None:
    write_file(workdir, "budget_rollout.py", ROLLOUT)
    write_file(workdir, "budget.toml", SPEC)
    # A pinned salt: with some salts every event of a row falls before the first cut-off
    # episode, and then the estimator's share is exactly k/n.
    for extra in (("--salt", SALT), ("--target", "budget_rollout:after", "--pair-with", "latest")):
        swept = prove("sweep", "budget.toml", "--yes", "--max-mde", "0.3", *extra)
        assert swept.returncode == 0, swept.stderr

    diff = prove("diff")
    assert diff.returncode == 0, diff.stderr
    assert diff.stderr == ""
    assert "; 2 conditions by 20 steps, q 0.05" in diff.stdout.splitlines()[0]
    assert (
        "warning: the runs' horizons differ (20 and 30); both are read by the common horizon 20"
        in diff.stdout
    )
    # Every row: a plain before share, a starred after share with its interval.
    row = re.compile(r"\b(unresolved|timeout)\b +\d\.\d{3}")
    rows = [line for line in diff.stdout.splitlines() if row.search(line)]
    assert len(rows) == 4, diff.stdout
    for line in rows:
        before, after = re.findall(r"(\d\.\d{3}\*?) \((\d+)/(\d+)\)", line)
        assert not before[0].endswith("*") and after[0].endswith("*"), line
        assert before[2] == after[2] == "90"

    document = json.loads(prove("diff", "--json").stdout)
    for condition in document["conditions"]:
        for row in condition["outcomes"]:
            assert row["after"]["starred"] is True and row["before"]["starred"] is False
            assert row["after"]["effective_n"] > 0 and row["after"]["variance"] > 0
            # Censored before the horizon: the share is the estimator's, not k/n.
            assert row["after"]["share"] != row["after"]["k"] / row["after"]["n"]
