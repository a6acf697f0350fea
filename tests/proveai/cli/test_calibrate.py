"""`proveai calibrate` with the real local embedding model, as a console script."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CLI, assert_clean_error
from tests.proveai.cli.run_kit import (
    replay_store,  # noqa: F401  (the `store` fixture)
)


def test_calibrate_with_the_local_model(proveai_cli: CLI, workdir: Path, store) -> None:
    result = proveai_cli("calibrate", "--out", "proveai.calibration.json", env=store, timeout=240)
    assert result.returncode == 0, result.stderr
    assert "Loading weights" not in result.stderr and "it/s]" not in result.stderr  # no third-party bar
    assert (
        result.stdout.startswith("Calibrated ")
        and "with all-MiniLM-L6-v2 → proveai.calibration.json" in result.stdout
    )
    data = json.loads((workdir / "proveai.calibration.json").read_text())
    assert data["model"] == "all-MiniLM-L6-v2"
    for entry in data["agents"].values():
        assert 0.05 <= entry["regressed_threshold"] < entry["unchanged_threshold"] <= 0.999
    assert "classify" in data["agents"] and entry["n_outputs"] == 3
    assert_clean_error(
        proveai_cli("calibrate", "--filter", "outcome=bad", env=store), 2, "nothing to calibrate on"
    )
