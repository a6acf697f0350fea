"""The one version of proveai: the installed distribution's, read on first use, printed by --version."""

from __future__ import annotations

import importlib.metadata

import pytest

import proveai
from proveai import version


def test_version(proveai_cli):
    result = proveai_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == "proveai 0.1.0"


def test_the_package_version_is_the_installed_distributions() -> None:
    installed = importlib.metadata.version("poisson-prove")
    assert version.package_version() == installed
    assert proveai.__version__ == installed and version.__version__ == installed
    with pytest.raises(AttributeError, match="has no attribute 'release'"):
        version.release  # noqa: B018
