"""`python -m proveai` (__main__.py): the same command line as the installed `proveai`
script, its exit code passed on to the shell."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from tests.conftest import isolated_env


def python_m(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proveai", *args],
        cwd=cwd,
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_is_the_console_scripts_own_with_exit_0(workdir: Path, home: Path, proveai_cli) -> None:
    module = python_m("--help", cwd=workdir, home=home)
    assert module.stdout.startswith("usage: proveai [-h] [--version] [--debug] COMMAND ...\n")
    assert module.stderr == ""
    assert module.returncode == 0
    script = proveai_cli("--help")
    assert (script.returncode, script.stderr) == (0, "")
    assert module.stdout == script.stdout


def test_version_is_printed_on_stdout(workdir: Path, home: Path) -> None:
    result = python_m("--version", cwd=workdir, home=home)
    assert result.stdout == f"proveai {importlib.metadata.version('poisson-prove')}\n"
    assert result.stderr == ""
    assert result.returncode == 0


def test_a_usage_error_reaches_the_shell_as_exit_2(workdir: Path, home: Path) -> None:
    result = python_m("--no-such-flag", cwd=workdir, home=home)
    assert result.stdout == ""
    assert result.stderr == "error: unrecognized arguments: --no-such-flag\nnext: proveai --help\n"
    assert result.returncode == 2
