"""The proveai command itself: --help lists every verb and loads no heavy library."""

from __future__ import annotations

import subprocess

from tests.proveai.cli.status_kit import HEAVY_IMPORTS


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
