"""`proveai ci` (cli/ci.py), run for real: the verb's one action, where the workflow goes, and
the lines it prints (one `Next:` per repository secret the chosen provider needs). What the
workflow holds is scaffold's (tests/proveai/ci/test_scaffold.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import CLI


def test_the_verb_alone_prints_its_help_and_is_a_usage_error(proveai_cli: CLI, workdir: Path) -> None:
    result = proveai_cli("ci")
    assert result.returncode == 2
    assert result.stdout.startswith("usage: proveai ci [-h] [--debug] ACTION ...\n")
    assert "init      write .github/workflows/proveai.yml" in result.stdout
    assert result.stderr == ""
    unknown = proveai_cli("ci", "deploy")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr == (
        "error: argument ACTION: invalid choice: 'deploy' (choose from 'init')\nnext: proveai ci --help\n"
    )
    assert not (workdir / ".github").exists()


def test_init_writes_at_the_project_root_from_any_folder_inside_it(proveai_cli: CLI, workdir: Path) -> None:
    (workdir / ".git").mkdir()
    inside = workdir / "src" / "agents"
    inside.mkdir(parents=True)
    result = proveai_cli("ci", "init", cwd=inside)
    assert result.returncode == 0
    assert result.stdout == (
        "Wrote .github/workflows/proveai.yml\nNext: Add a repo secret named `OPENROUTER_API_KEY`.\n"
    )
    # this SDK is an editable install, which CI cannot copy: the pin's warning and its next: line
    assert [line.split(":")[0] for line in result.stderr.splitlines()] == ["warning", "next"]
    workflow = workdir / ".github" / "workflows" / "proveai.yml"
    assert yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"]["verify"]
    assert not (inside / ".github").exists()


def test_a_provider_with_two_secrets_gets_a_next_line_for_each(proveai_cli: CLI, workdir: Path) -> None:
    (workdir / ".git").mkdir()
    result = proveai_cli("ci", "init", "--provider", "bedrock")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Wrote .github/workflows/proveai.yml",
        "Next: Add a repo secret named `AWS_SECRET_ACCESS_KEY`.",
        "Next: Add a repo secret named `AWS_ACCESS_KEY_ID`.",
    ]
