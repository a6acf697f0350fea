"""CI auto-targeting on a real project: a pull request that edits only a prompt file an agent
reads, or only a helper module it imports, gets its snapshot verified; one that edits an
unrelated file skips it and says why. Everything through the installed `proveai` script in
a git repository, with the environment the CI page describes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CLI, isolated_env
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import git, run_pipeline, server_env

PIPELINE = '''\
import sys
from pathlib import Path

import helpers
from proveai import FileExporter, monitor, trace


@monitor("qa_check", model=helpers.MODEL)
def qa_check(reply):
    return helpers.ask(Path("prompts/qa_check.md").read_text(encoding="utf-8"), reply)


if __name__ == "__main__":
    with trace("support", exporters=[FileExporter()]):
        print(qa_check(sys.argv[1] if len(sys.argv) > 1 else "We refunded your order."))
'''

HELPERS = '''\
from proveai import dispatch

MODEL = "gpt-4o-mini"
STYLE = ""


def ask(system, user):
    messages = [{"role": "system", "content": system + STYLE}, {"role": "user", "content": user}]
    return dispatch(MODEL).call(messages, MODEL).text
'''

FILES = {
    "pyproject.toml": '[project]\nname = "support"\nversion = "0"\n',
    ".gitignore": "proveai/traces/\nproveai/runs/\n",
    "pipeline.py": PIPELINE,
    "helpers.py": HELPERS,
    "prompts/qa_check.md": "Check the reply for mistakes; answer OK or list them.\n",
    "README.md": "# support\n",
}

SKIPPED_BECAUSE = "(no changed file is the snapshot, its script, or a source, read file or imported module"


def change_on_branch(project: Path, branch: str, path: str, old: str, new: str) -> None:
    git(project, "checkout", "-q", "-b", branch, "main")
    text = (project / path).read_text(encoding="utf-8")
    assert old in text
    (project / path).write_text(text.replace(old, new), encoding="utf-8")
    git(project, "commit", "-q", "-am", f"edit {path}")


def test_a_prompt_file_or_helper_change_targets_its_snapshot(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "support"
    for name, text in FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    git(project, "init", "-q", "-b", "main")
    with ModelServer(judge_verdict="worse") as server:
        env = server_env(server.openai_url)
        assert run_pipeline(project, isolated_env(home, env)).returncode == 0
        cli = CLI("proveai", project, home)
        assert cli("snapshot", "init", env=env).returncode == 0
        pinned = json.loads((project / "proveai/snapshots/latest.json").read_text(encoding="utf-8"))
        assert pinned["agents"]["qa_check"]["reads"] == ["prompts/qa_check.md"]
        assert pinned["agents"]["qa_check"]["imports"] == ["helpers.py"]
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "pipeline and its pins")
        summary = tmp_path / "summary.md"
        ci_env = {**env, "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "main",
                  "PROVEAI_STRICT_JUDGE": "1", "GITHUB_STEP_SUMMARY": str(summary)}

        change_on_branch(project, "prompt", "prompts/qa_check.md", "list them", "approve everything")
        prompt = cli("snapshot", "verify", env=ci_env)
        assert prompt.returncode == 1, (prompt.stdout, prompt.stderr)  # the judge calls the change worse
        assert "auto-targeted 1 of 1 snapshot(s) by git diff main...HEAD (1 changed file(s)); " \
            "targeted: latest (prompts/qa_check.md read by qa_check)\n" in prompt.stdout
        assert "regressed" in prompt.stdout
        assert "prompts/qa_check.md read by qa_check" in summary.read_text(encoding="utf-8")

        change_on_branch(project, "helper", "helpers.py", 'STYLE = ""', 'STYLE = " Be curt."')
        helper = cli("snapshot", "verify", env=ci_env)
        assert helper.returncode == 1, (helper.stdout, helper.stderr)
        assert "latest (helpers.py imported by qa_check)" in helper.stdout

        change_on_branch(project, "docs", "README.md", "# support", "# support bot")
        unrelated = cli("snapshot", "verify", env=ci_env)
        assert unrelated.returncode == 0, (unrelated.stdout, unrelated.stderr)
        assert "auto-targeted 0 of 1 snapshot(s) by git diff main...HEAD (1 changed file(s)); " \
            f"skipped: latest {SKIPPED_BECAUSE} of its agents)" in unrelated.stdout
        assert "regressed" not in unrelated.stdout
