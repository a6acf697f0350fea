"""What `poisson-prove sweep --yes` of a trivial local spec imports, parent and worker alike (read
from the command's own `-X importtime` log): the store's writer and pyarrow.parquet, and none of
what such a sweep does not need: SciPy, pandas, matplotlib, Jinja2, polars, OpenTelemetry,
asyncio (no coroutine to run), multiprocessing (no episode in a child), importlib.metadata and
the email parser (no instrumentor named; the stored version is read from its folder), the other
backends' adapters, the dashboard (a store without a page: it is looked for by its path first),
the comparison."""

from __future__ import annotations

from pathlib import Path

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
axes = { x = { type = "categorical", values = ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"] } }
declare = { outcomes = ["ok", "bad"], failures = ["bad"] }
"""
NOT_NEEDED = {
    "scipy", "pandas", "matplotlib", "jinja2", "polars", "opentelemetry", "asyncio", "multiprocessing",
    "importlib.metadata",
    "email", "poisson_prove.backends.dask", "poisson_prove.backends.ray", "poisson_prove.backends.modal",
    "poisson_prove.backends.burla", "poisson_prove.dashboard", "poisson_prove.comparison", "pyarrow.compute",
}


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_a_trivial_local_sweep_imports_only_what_it_needs(prove, workdir: Path) -> None:
    (workdir / "trivial.py").write_text(ROLLOUT)
    (workdir / "spec.toml").write_text(SPEC)
    result = prove("sweep", "spec.toml", "--yes", "--max-mde", "1", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    assert 'done 100 rollouts in run "trivial' in result.stdout
    imported = _imported(result.stderr)
    # the log is real: the parent's plan and the worker's writer are in it
    assert {"poisson_prove.design.plan", "poisson_prove.backends.pool", "pyarrow.parquet"} <= imported
    top_levels = {name.split(".")[0] for name in imported}
    assert sorted(name for name in NOT_NEEDED if name in imported or name in top_levels) == []
    assert not list(workdir.rglob(DASHBOARD_FILE))  # no page was there, none was written


def test_a_large_plan_cut_short_by_max_rollouts_does_not_import_pandas(prove, workdir: Path) -> None:
    # pandas is loaded before the clock only for a sweep that will convert more than 20,000 rows
    # through Arrow's own conversion (store.table.prepare_conversion); --max-rollouts 100 will not.
    (workdir / "trivial.py").write_text(ROLLOUT)
    (workdir / "spec.toml").write_text(SPEC.replace("replicates = 10", "replicates = 3000"))
    result = prove(
        "sweep", "spec.toml", "--yes", "--max-mde", "1", "--max-rollouts", "100",
        env={"PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert result.returncode == 3, result.stderr  # stopped short of its plan, as asked
    imported = _imported(result.stderr)
    assert "pyarrow.parquet" in imported and "pandas" not in imported
