"""`python -m poisson_prove` (__main__.py): the same command line as the installed
`poisson-prove` script, its exit code passed on to the shell."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from tests.conftest import isolated_env


def python_m(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "poisson_prove", *args],
        cwd=cwd,
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_version_is_printed_on_stdout_with_exit_0(workdir: Path, home: Path) -> None:
    result = python_m("--version", cwd=workdir, home=home)
    assert result.stdout == f"poisson-prove {importlib.metadata.version('poisson-prove')}\n"
    assert result.stderr == ""
    assert result.returncode == 0


def test_a_usage_error_reaches_the_shell_as_exit_2(workdir: Path, home: Path) -> None:
    result = python_m("--no-such-flag", cwd=workdir, home=home)
    assert result.stdout == ""
    assert result.stderr == "error: unrecognized arguments: --no-such-flag\nnext: poisson-prove --help\n"
    assert result.returncode == 2


def test_help_is_the_console_scripts_own(workdir: Path, home: Path, prove) -> None:
    module = python_m("--help", cwd=workdir, home=home)
    script = prove("--help")
    assert module.returncode == script.returncode == 0
    assert module.stderr == script.stderr == ""
    assert module.stdout == script.stdout
    assert module.stdout.startswith("usage: poisson-prove ")
