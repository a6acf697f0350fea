"""The proveai command itself: --version, --help, and the retired verbs (analyze, validate-fix)."""

from __future__ import annotations

import subprocess

from tests.conftest import assert_clean_error
from tests.proveai.cli.status_kit import HEAVY_IMPORTS


def test_version(proveai_cli):
    result = proveai_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == "proveai 0.1.0"


def test_retired_verbs_exit_2_with_a_redirect(proveai_cli):
    result = proveai_cli("analyze", "--traces", "x")
    assert_clean_error(result, 2, "proveai analyze was retired", "written automatically at capture time")
    assert "next: proveai status --filter detection=flagged" in result.stderr
    result = proveai_cli("validate-fix")
    assert_clean_error(result, 2, "proveai validate-fix was retired")
    assert "next: proveai run --hold-at <span_id> --override AGENT=PATH" in result.stderr


def test_help_lists_every_verb_and_loads_no_heavy_library(proveai_cli, workdir):
    import sys

    result = proveai_cli("--help")
    assert result.returncode == 0 and result.stderr == ""
    for verb in ("snapshot", "status", "list", "analyze", "baseline", "experiment", "run", "calibrate", "ci",
                 "validate-fix"):
        assert f"\n    {verb} " in result.stdout or f"\n    {verb}\n" in result.stdout, verb
    loaded = subprocess.run([sys.executable, "-c", HEAVY_IMPORTS], capture_output=True, text=True, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.splitlines()[-1] == "[]"
