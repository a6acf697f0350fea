"""The pytest plugin, loaded through its pytest11 entry point by a real `pytest` subprocess
in a temporary project with a pinned snapshot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CLI, isolated_env
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import make_project, run_pipeline, server_env

USER_TESTS = """
from proveai import dispatch
from proveai.pytest import snapshot


@snapshot.test("draft")
def test_same_output_passes(snap):
    snap.assert_no_regression(snap.output)


@snapshot.test("draft")
def test_changed_output_is_judged(snap):
    snap.assert_no_regression("Go away.")


@snapshot.test("drafter")
def test_unknown_agent(snap):
    pass


def test_mock_fixture(proveai_mock):
    proveai_mock.responses(["scripted"])
    assert dispatch("gpt-4o-mini").call([{"role": "user", "content": "x"}], "gpt-4o-mini").text == "scripted"


def test_registry_restored_after_the_mock_fixture():
    from proveai.providers.registry import registrations
    assert not any(r.source == "user" for r in registrations())
"""


@pytest.fixture
def project(tmp_path: Path, home: Path):
    root = tmp_path / "proj"
    make_project(root)
    (root / "test_agents.py").write_text(USER_TESTS, encoding="utf-8")
    with ModelServer(judge_verdict="worse") as server:
        server.judge_rationale = "lost the polite tone"
        env = server_env(server.openai_url)
        assert run_pipeline(root, isolated_env(home, env)).returncode == 0
        assert CLI("proveai", root, home)("snapshot", "init", env=env).returncode == 0
        yield root, env, server


def run_pytest(root: Path, home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "test_agents.py", *args],
        cwd=root,
        env=isolated_env(home, env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def outcome(stdout: str, name: str) -> str:
    for line in stdout.splitlines():
        if line.endswith(f"::{name}") or f"::{name} " in line:
            return line.split()[0]
    raise AssertionError(f"{name} not reported:\n{stdout}")


def test_plugin_grades_against_the_pin(project, home: Path) -> None:
    root, env, server = project
    result = run_pytest(root, home, env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert outcome(result.stdout, "test_same_output_passes") == "PASSED"
    assert outcome(result.stdout, "test_changed_output_is_judged") == "FAILED"
    assert "agent 'draft' (snapshot 'latest') regressed — judge: lost the polite tone" in result.stdout
    assert outcome(result.stdout, "test_unknown_agent") == "ERROR"
    assert (
        "unknown agent 'drafter'" in result.stdout
        and "known agents: classify, draft, qa_check" in result.stdout
    )
    assert outcome(result.stdout, "test_mock_fixture") == "PASSED"
    assert outcome(result.stdout, "test_registry_restored_after_the_mock_fixture") == "PASSED"

    server.judge_verdict = "equivalent"
    server.judge_rationale = "same meaning"
    # the regressed verdict is cached per (old hash, new hash, judge model): a new judge model asks again
    relaxed = run_pytest(root, home, {**env, "PROVEAI_JUDGE_MODEL": "gpt-4o"}, "-k", "judged")
    assert relaxed.returncode == 0, relaxed.stdout


def test_plugin_fails_with_the_reason_when_the_judge_is_unavailable(project, home: Path) -> None:
    root, env, _ = project
    no_key = {**env, "PROVEAI_JUDGE_MODEL": "claude-haiku-4-5"}
    result = run_pytest(root, home, no_key, "-k", "judged")
    assert result.returncode == 1
    assert "changed and could not be judged" in result.stdout
    assert "ANTHROPIC_API_KEY" in result.stdout


def test_snapshot_option_chooses_another_snapshot(project, home: Path) -> None:
    root, env, _ = project
    result = run_pytest(root, home, env, "--proveai-snapshot", "nightly", "-k", "same_output")
    assert result.returncode == 1
    assert "no snapshot at" in result.stdout and "nightly.json" in result.stdout


def test_plugin_loads_light_in_any_pytest_run(tmp_path: Path, home: Path) -> None:
    # pytest11 loads the plugin in every run of this environment: nothing heavy, never a failure
    probe = (
        "import sys, proveai.pytest.plugin\n"
        "heavy = ('httpx', 'numpy', 'scipy', 'rich',\n"
        "         'proveai.snapshot', 'proveai.capture', 'proveai.providers')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(heavy)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=isolated_env(home, {}),
        capture_output=True, text=True, timeout=60,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "[]"
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--trace-config", "test_plain.py"],
        cwd=tmp_path, env=isolated_env(home, {}), capture_output=True, text=True, timeout=120,
    )
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "proveai.pytest.plugin" in plain.stdout and "1 passed" in plain.stdout
