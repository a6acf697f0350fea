"""A backend whose extra is not installed is refused with the pip line, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.backends.conftest import sweep_args, write_project
from tests.poisson_prove.backends.fake_sdk_kit import HIDDEN


@pytest.mark.parametrize("backend", ["modal", "burla", "dask", "ray"])
def test_a_missing_extra_is_refused_with_the_pip_line(prove, workdir: Path, backend: str) -> None:
    write_project(workdir, "rollout", replicates=5)
    result = prove(*sweep_args("--backend", backend), env={"PYTHONPATH": HIDDEN})
    assert_clean_error(result, 1, f"--backend {backend} needs the {backend} extra")
    assert f"next: pip install 'poisson-prove[{backend}]'" in result.stderr
    assert not list((workdir / "prove-runs").glob("*/manifest.json"))
