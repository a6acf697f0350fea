"""`poisson-prove runs` on a terminal draws its table through the shared drawer: a run named
like Rich markup prints as itself (a markup string would crash with MarkupError, exit 70)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import isolated_env, run_on_terminal

SPEC = """
target = "agent:rollout"
target_id = "agent"
t_unit = "steps"
replicates = 20

[axes.x]
type = "categorical"
values = ["a", "b"]

[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
successes = ["ok"]
"""
AGENT = """
import random
from poisson_prove import Episode

def rollout(cfg, seed):
    rng = random.Random(seed)
    return Episode("bad" if rng.random() < 0.3 else "ok", rng.randint(1, 5), 5)
"""
NAME = "[/oops] [bold]not bold[/bold]"


def test_a_run_named_like_markup_lists_as_itself_on_a_terminal(prove, workdir: Path, home: Path) -> None:
    (workdir / "prove.toml").write_text(textwrap.dedent(SPEC), encoding="utf-8")
    (workdir / "agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    swept = prove("sweep", "--yes", "--max-mde", "0.5", "--name", NAME)
    assert swept.returncode == 0, swept.stderr

    env = isolated_env(home, {"TERM": "xterm-256color", "COLUMNS": "200"})
    code, drawn, errors = run_on_terminal("poisson-prove", ["runs"], workdir, env)
    assert code == 0, errors
    assert "MarkupError" not in errors and "unexpected failure" not in errors
    assert NAME in drawn
    assert "\x1b[" in drawn  # the Rich table, not the plain listing

    plain = prove("runs")  # a pipe: the plain listing, unchanged
    assert plain.returncode == 0, plain.stderr
    header, row = plain.stdout.splitlines()[:2]
    assert header.split() == ["name", "id", "status", "done/planned", "no", "outcome", "salt", "paired",
                              "with", "created"]
    assert row.startswith(NAME + "  ")
