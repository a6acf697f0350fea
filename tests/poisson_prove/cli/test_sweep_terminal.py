"""On a terminal (a real pty): the [y/N] question, declining writes nothing, and the live
progress bar; on a pipe the same sweep prints plain progress lines and no escape codes."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import isolated_env, run_on_terminal
from tests.poisson_prove.helpers import HEAVY_MODULES, episodes, imports_of, small_spec, tree, write

SLOWISH = """
import time
from poisson_prove import Episode

def rollout(cfg, seed):
    time.sleep(0.004)
    return Episode("ok", 1, 5, {"case_id": cfg["x"]})
"""


def _on_pty(workdir: Path, home: Path, answer: bytes, *args: str) -> tuple[int, str]:
    """Run the sweep with stdin, stdout and stderr on a pty; type `answer` at the question."""
    env = isolated_env(home, {"TERM": "xterm-256color"})
    argv = ["sweep", "--max-mde", "0.5", *args]
    code, drawn, _ = run_on_terminal("poisson-prove", argv, workdir, env, answer=answer, all_on_terminal=True)
    return code, drawn


def test_question_then_progress_bar_on_a_terminal(workdir: Path, home: Path) -> None:
    write(workdir, "agent.py", SLOWISH)
    small_spec(workdir, replicates=150)
    code, output = _on_pty(workdir, home, b"y\n")
    assert code == 0, output
    assert "run it? [y/N]" in output
    assert "\x1b[" in output and "━" in output  # rich drew its bar
    assert "rollouts" in output and "ETA" in output
    assert 'done 300 rollouts in run "agent ' in output
    assert len(episodes(workdir / "prove-runs")) == 300
    # `runs` on the same terminal draws a table.
    env = isolated_env(home)
    code, drawn, _ = run_on_terminal("poisson-prove", ["runs"], workdir, env, all_on_terminal=True)
    assert code == 0, drawn
    assert "runs in prove-runs" in drawn and "300/300" in drawn
    assert "━" in drawn or "─" in drawn  # box drawing: a rich table, not plain columns


def test_declining_writes_nothing(workdir: Path, home: Path) -> None:
    write(workdir, "agent.py", SLOWISH)
    small_spec(workdir, replicates=150)
    before = tree(workdir)
    code, output = _on_pty(workdir, home, b"n\n")
    assert code == 1, output
    assert "error: declined: nothing was run or written" in output
    assert tree(workdir) == before


def test_plain_progress_lines_on_a_pipe(prove, workdir: Path) -> None:
    write(workdir, "agent.py", SLOWISH)
    small_spec(workdir, replicates=150)
    result = prove("sweep", "--yes", "--max-mde", "0.5")
    assert result.returncode == 0
    progress = [line for line in result.stderr.splitlines() if line.startswith("... ")]
    # About one line per tenth of the work (the count where a tenth was crossed), in order.
    counts = [int(line.split()[1].replace(",", "")) for line in progress]
    assert 5 <= len(progress) <= 10 and counts == sorted(counts) and counts[-1] < 300
    assert all(line.endswith(" of 300 rollouts") for line in progress)
    assert "\x1b" not in result.stdout + result.stderr



def test_help_imports_no_heavy_library(workdir: Path, home: Path) -> None:
    """`--help` and `sweep --help` stay instant: the import log of the installed script shows
    none of the heavy libraries."""
    for args in (["--help"], ["sweep", "--help"]):
        stdout, imported = imports_of(args, workdir, home)
        assert stdout.startswith("usage: poisson-prove"), stdout
        assert not imported & HEAVY_MODULES, sorted(imported & HEAVY_MODULES)
