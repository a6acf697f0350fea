"""A real three-agent pipeline in a temporary git repository, for the snapshot tests.

The pipeline calls its model through proveai's providers; the tests point the
PROVEAI_PROVIDER_* variables at the fake model server on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CLI, isolated_env
from tests.proveai.model_server import ModelServer

PIPELINE = '''\
"""Support triage: classify -> draft -> qa_check, each one model call."""
import os
import sys

from proveai import FileExporter, dispatch, monitor, trace

MODEL = "gpt-4o-mini"
CLASSIFY_PROMPT = "Classify the ticket into one word."
DRAFT_PROMPT = "Draft a short, polite reply for this category."
QA_PROMPT = "Check the reply for mistakes; answer OK or list them."
LOOPS = 1


def ask(system, user):
    kwargs = {}
    if os.environ.get("PROVEAI_SEED"):
        kwargs["seed"] = int(os.environ["PROVEAI_SEED"])
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return dispatch(MODEL).call(messages, MODEL, **kwargs).text


@monitor("classify", model=MODEL, kind="CHAT_MODEL")
def classify(ticket):
    return ask(CLASSIFY_PROMPT, ticket)


@monitor("draft", parent_agent="classify", model=MODEL)
def draft(category):
    return ask(DRAFT_PROMPT, category)


@monitor("qa_check", parent_agent="draft", model=MODEL)
def qa_check(reply):
    return ask(QA_PROMPT, reply)


def main(argv):
    ticket = argv[1] if len(argv) > 1 else "My order arrived broken"
    with trace("support", exporters=[FileExporter()]):
        category = classify(ticket)
        reply = draft(category)
        for _ in range(LOOPS):
            reply_check = qa_check(reply)
    print(reply_check)


if __name__ == "__main__":
    main(sys.argv)
'''


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "PATH": "/usr/bin:/bin",
            "HOME": str(cwd),
        },
    )
    return result.stdout


def make_project(root: Path, *, package: bool = False) -> Path:
    """A git repository with pipeline.py (or pkg/pipeline.py when package=True), committed."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "triage"\nversion = "0"\n', encoding="utf-8")
    if package:
        (root / "pkg").mkdir()
        (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
        target = root / "pkg" / "pipeline.py"
    else:
        target = root / "pipeline.py"
    target.write_text(PIPELINE, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "pipeline")
    return target


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def server_env(server_url: str) -> dict[str, str]:
    """Route gpt-* (the pipeline and the judge) to the fake server."""
    return {
        "PROVEAI_PROVIDER_PATTERN": "gpt-*",
        "PROVEAI_PROVIDER_BASE_URL": server_url,
        "PROVEAI_PROVIDER_API_KEY": "test-key",
        "PROVEAI_JUDGE_MODEL": "gpt-4o-mini",
    }


def run_pipeline(
    cwd: Path, env: dict[str, str], *args: str, module: bool = False
) -> subprocess.CompletedProcess[str]:
    command = (
        [sys.executable, "-m", "pkg.pipeline", *args] if module else [sys.executable, "pipeline.py", *args]
    )
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def table_rows(stdout: str) -> dict[str, str]:
    """Agent -> its verdict row, from the plain verdict table."""
    rows = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in ("classify", "draft", "qa_check", "extra_agent"):
            rows[parts[0]] = line
    return rows


def verdicts_of(project: Path, stdout: str) -> dict[str, dict]:
    run_id = next(w for w in stdout.split() if w.startswith("verify-"))
    data = json.loads((project / "proveai" / "runs" / run_id / "verdicts.json").read_text(encoding="utf-8"))
    return {v["agent"]: v for v in data["verdicts"]}


def pinned_project(project: Path, server: Any, home: Path) -> tuple[CLI, dict[str, str]]:
    """One captured run of the pipeline, pinned as the snapshot 'latest'."""
    env = server_env(server.openai_url)
    assert run_pipeline(project, isolated_env(home, env)).returncode == 0
    cli = CLI("proveai", project, home)
    assert cli("snapshot", "init", env=env).returncode == 0
    return cli, env


@pytest.fixture(name="two_runs")  # tests ask for `two_runs`
def two_runs_project(tmp_path: Path, home: Path) -> Iterator[tuple[Path, CLI, dict[str, str]]]:
    """The project with two captured runs ("Where is my refund?", then "Second ticket"), nothing
    pinned yet; its `proveai` CLI and the environment routing its models to the fake server."""
    project = tmp_path / "proj"
    make_project(project)
    with ModelServer() as server:
        env = server_env(server.openai_url)
        assert run_pipeline(project, isolated_env(home, env), "Where is my refund?").returncode == 0
        assert run_pipeline(project, isolated_env(home, env), "Second ticket").returncode == 0
        yield project, CLI("proveai", project, home), env


def stored_trace_ids_in(folder: Path) -> list[str]:
    """The trace ids manifest.json lists, oldest first."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return sorted(manifest, key=lambda tid: manifest[tid]["timestamp"])


def stored_trace_ids(project: Path) -> list[str]:
    return stored_trace_ids_in(project / "proveai" / "traces")


@contextlib.contextmanager
def strict_judge_server() -> Iterator[Any]:
    """The fake model server whose judge calls every change worse, with a fixed rationale."""
    from tests.proveai.model_server import ModelServer

    with ModelServer(judge_verdict="worse") as running:
        running.judge_rationale = "lost the polite tone"
        yield running
