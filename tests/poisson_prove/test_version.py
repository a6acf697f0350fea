"""The version: the installed distribution's (prove_common.version), the one pyproject.toml publishes
and `--version` prints."""

from __future__ import annotations

import tomllib
from pathlib import Path

from poisson_prove import __version__
from poisson_prove.version import __version__ as module_version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_version_is_one_number_everywhere(prove) -> None:
    published = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert module_version == __version__ == published
    printed = prove("--version")
    assert printed.returncode == 0 and printed.stderr == ""
    assert printed.stdout == f"poisson-prove {module_version}\n"
