"""render/snapshot.py on a real terminal: `proveai snapshot` draws its tables with rich (the
verdict table, the side-by-side diff), and text from the judge is never read as markup."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CLI, isolated_env, run_on_terminal
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import edit, make_project, run_pipeline, server_env


def run_on_tty(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    code, drawn, _ = run_on_terminal("proveai", args, cwd, env)
    return code, drawn


def test_rich_tables_print_judge_text_verbatim(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    make_project(project)
    with ModelServer(judge_verdict="worse") as server:
        server.judge_rationale = "[bold]lost[/] the [1, 2] list"
        env = server_env(server.openai_url)
        assert run_pipeline(project, isolated_env(home, env)).returncode == 0
        assert CLI("proveai", project, home)("snapshot", "init", env=env).returncode == 0
        edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
        tty_env = isolated_env(home, {**env, "TERM": "xterm-256color"})
        code, out = run_on_tty(["snapshot", "verify"], project, tty_env)
    assert code == 1
    assert "┏" in out  # drawn by rich
    assert "[bold]lost[/] the [1, 2] list" in out
    code, out = run_on_tty(["snapshot", "diff", "--side-by-side", "--agent", "draft"], project, tty_env)
    assert code == 0 and "pinned" in out and "Draft a curt reply" in out
