"""The one version mechanism of both packages: the installed distribution's metadata (the
version pyproject.toml publishes), read on first use, with a fallback for an uninstalled tree."""

from __future__ import annotations

import json
import os
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


def test_the_folder_reading_agrees_with_importlib_metadata_for_every_installed_distribution(
    tmp_path: Path,
) -> None:
    """In a fresh interpreter, as a command line reads it: within this test process another test
    may have put a zip or a distribution finder on the path, where the reading (rightly) defers."""
    code = (
        "import json, importlib.metadata as m; from prove_common import version as v;"
        "names = sorted({d.metadata['Name'] for d in m.distributions()});"
        "print(json.dumps({n: [v._version_on_path(n), m.version(n)] for n in names}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=isolated_env(tmp_path), timeout=60
    )
    assert result.returncode == 0, result.stderr
    read = json.loads(result.stdout)
    assert version.DISTRIBUTION in read and read[version.DISTRIBUTION][0] is not None
    assert {n: pair for n, pair in read.items() if pair[0] is not None and pair[0] != pair[1]} == {}
    assert sum(pair[0] is not None for pair in read.values()) > len(read) // 2  # the reading is really used


def test_what_the_folder_reading_is_not_sure_of_is_left_to_importlib_metadata(tmp_path: Path) -> None:
    def dist(root: Path, folder: str, metadata: str) -> Path:
        (root / folder).mkdir(parents=True)
        (root / folder / "METADATA").write_text(metadata, encoding="utf-8")
        return root

    header = "Metadata-Version: 2.1\nName: prove-fake-pkg\nVersion: 2.0\n"
    plain = dist(tmp_path / "plain", "Prove_Fake.Pkg-2.0.dist-info", header)
    folded = dist(tmp_path / "folded", "prove_folded-1.0.dist-info", "Name: prove-folded\n x\nVersion: 1.0\n")
    late = dist(tmp_path / "late", "prove_late-1.0.dist-info", "Name: prove-late\n\nVersion: 1.0\n")
    code = (
        "import json, warnings, importlib.metadata as m; from prove_common import version as v;"
        "warnings.simplefilter('ignore');"
        "names = ['prove-fake-pkg', 'prove-folded', 'prove-late'];"
        "print(json.dumps([[v._version_on_path(n), v.distribution_version(n), m.version(n)] for n in names]"
        " + [[v._version_on_path('prove-absent'), v.distribution_version('prove-absent')]]))"
    )
    path = os.pathsep.join([str(plain), str(folded), str(late), os.environ.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        env={**isolated_env(tmp_path), "PYTHONPATH": path},
    )
    assert result.returncode == 0, result.stderr
    # read from the folder; a folded header block and a Version after the headers are left to
    # importlib.metadata, and so is a distribution not installed
    assert json.loads(result.stdout) == [
        ["2.0", "2.0", "2.0"], [None, "1.0", "1.0"], [None, None, None], [None, version.UNKNOWN]
    ]
