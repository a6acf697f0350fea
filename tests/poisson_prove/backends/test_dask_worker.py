"""What the Dask backend installs on an existing cluster's workers: the spec's folder as shipped
(what is left out), unpacked into a worker's own folder and removed at teardown, and the named
variables set in the worker's process and put back as they were."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from poisson_prove.backends._dask_worker import Environment, SpecFolder, spec_folder_zip


def test_the_spec_folder_ships_its_code_without_environments_stores_caches_or_tls_files(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "project"
    for name in ["agent.py", "prove.toml", "data/cases.csv", "pkg/__init__.py", "pkg/__pycache__/x.pyc",
                 "pkg/old.pyc", ".git/HEAD", ".venv/pyvenv.cfg", "env2/pyvenv.cfg", "env2/lib/big.py",
                 "prove-runs/.store.lock", "prove-runs/r1/manifest.json", "node_modules/x.js",
                 "certs/node.key", "certs/ca.pem"]:
        (spec / name).parent.mkdir(parents=True, exist_ok=True)
        (spec / name).write_text(name)
    data, count = spec_folder_zip(spec, exclude=[spec / "certs" / "node.key"])
    names = sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())
    assert names == ["agent.py", "certs/ca.pem", "data/cases.csv", "pkg/__init__.py", "prove.toml"]
    assert count == len(names)


def test_a_worker_gets_the_folder_and_the_variables_and_teardown_takes_them_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "project"
    (spec / "pkg").mkdir(parents=True)
    (spec / "pkg" / "agent.py").write_text("X = 1\n")
    worker = SimpleNamespace(local_directory=str(tmp_path / "worker"))
    folder = SpecFolder("prove-run-spec", spec_folder_zip(spec)[0])
    folder.setup(worker)
    assert (tmp_path / "worker" / "prove-run-spec" / "pkg" / "agent.py").read_text() == "X = 1\n"
    folder.teardown(worker)
    assert not (tmp_path / "worker" / "prove-run-spec").exists()

    monkeypatch.setenv("PROVE_KEPT", "before")
    monkeypatch.delenv("PROVE_NEW", raising=False)
    environment = Environment({"PROVE_KEPT": "sweep's", "PROVE_NEW": "secret"})
    environment.setup(worker)
    assert (os.environ["PROVE_KEPT"], os.environ["PROVE_NEW"]) == ("sweep's", "secret")
    environment.teardown(worker)
    assert os.environ["PROVE_KEPT"] == "before" and "PROVE_NEW" not in os.environ
