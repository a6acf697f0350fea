"""A sweep into a store without a dashboard never imports the dashboard's modules (the page is
looked for by its path first), nor pandas or pyarrow.compute for its batches: read from the
command's own `-X importtime` log."""

from __future__ import annotations

from pathlib import Path

from poisson_prove.cli import dashboard as cli_dashboard
from poisson_prove.dashboard import DASHBOARD_FILE

ROLLOUT = """
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("ok" if seed % 10 else "bad", 1, 5, {"case_id": cfg["x"]})
"""
SPEC = """
target = "trivial:rollout"
target_id = "trivial"
replicates = 10
axes = { x = { type = "categorical", values = ["c0", "c1", "c2", "c3", "c4"] } }
declare = { outcomes = ["ok", "bad"], failures = ["bad"] }
"""


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_the_page_name_is_the_dashboards() -> None:
    assert cli_dashboard.DASHBOARD_FILE == DASHBOARD_FILE


def test_a_small_sweep_imports_no_dashboard_pandas_or_pyarrow_compute(prove, workdir: Path) -> None:
    (workdir / "trivial.py").write_text(ROLLOUT)
    (workdir / "spec.toml").write_text(SPEC)
    result = prove("sweep", "spec.toml", "--yes", "--max-mde", "0.95", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    imported = _imported(result.stderr)
    assert "poisson_prove.store.table" in imported and "pyarrow.parquet" in imported  # the log is real
    assert not {"poisson_prove.dashboard", "poisson_prove.comparison", "pandas", "pyarrow.compute"} & imported
    assert not (workdir / ".prove" / DASHBOARD_FILE).exists()
