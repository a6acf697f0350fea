"""`poisson-prove diff` on a wide terminal draws its per-condition table through the shared
drawer: outcome names and axis values that look like Rich markup print as themselves (as a
markup string, "[/bad]" crashed the table with MarkupError, exit 70)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import isolated_env, run_on_terminal

SPEC = """
target = "agent:rollout"
target_id = "agent"
t_unit = "steps"
replicates = 30

[axes.x]
type = "categorical"
values = ["[red]a", "b[/x]"]

[declare]
outcomes = ["ok", "[/bad]"]
failures = ["[/bad]"]
successes = ["ok"]
"""
AGENT = """
import random
from poisson_prove import Episode

def rollout(cfg, seed):
    rng = random.Random(seed)
    return Episode("[/bad]" if rng.random() < 0.3 else "ok", rng.randint(1, 5), 5)
"""


@pytest.mark.parametrize("columns", ["200", "80"])
def test_markup_like_outcomes_and_values_print_as_themselves(
    prove, workdir: Path, home: Path, columns: str
) -> None:
    (workdir / "prove.toml").write_text(textwrap.dedent(SPEC), encoding="utf-8")
    (workdir / "agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    for name in ("before", "after"):
        swept = prove("sweep", "--yes", "--max-mde", "0.6", "--name", name)
        assert swept.returncode == 0, swept.stderr

    env = isolated_env(home, {"TERM": "xterm-256color", "COLUMNS": columns})
    code, drawn, errors = run_on_terminal("poisson-prove", ["diff", "before", "after"], workdir, env)
    assert code == 0, errors
    assert "MarkupError" not in errors and "unexpected failure" not in errors
    assert "[/bad]" in drawn
    assert "[red]a" in drawn and "b[/x]" in drawn
    assert "\x1b[" in drawn  # drawn for a terminal, in colour
