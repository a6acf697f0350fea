"""The one version mechanism of both packages: the installed distribution's metadata (the
version pyproject.toml publishes), read on first use, with a fallback for an uninstalled tree."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from prove_common import version
from tests.conftest import isolated_env

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_version_is_the_one_pyproject_publishes() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert project["name"] == version.DISTRIBUTION
    assert version.package_version() == version.__version__ == project["version"]


def test_a_distribution_that_is_not_installed_reads_as_unknown() -> None:
    missing = version.distribution_version("no-such-distribution-prove-test")
    assert missing == version.UNKNOWN == "0.0.0+unknown"


def test_importing_either_package_or_its_version_module_reads_no_metadata(tmp_path: Path) -> None:
    code = (
        "import sys, poisson_prove, proveai, poisson_prove.version, proveai.version, prove_common.version;"
        "print('importlib.metadata' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=isolated_env(tmp_path), timeout=60
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "False\n", "")
