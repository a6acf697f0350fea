"""Helpers for the backend tests: a project folder with the fleet agent, and the store read
back with an independent Parquet reader (DuckDB). Ray tests are opt-in: `-m ray`."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
SALT = "00112233445566778899aabbccddeeff"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Ray starts a ~740 MB cluster: its tests run only when `-m ray` selects them."""
    if "ray" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="opt-in: pytest -m ray (make test-ray)")
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(skip)


def write_project(
    folder: Path,
    target: str,
    *,
    replicates: int = 8,
    values: tuple[float, ...] = (0.2, 0.6),
    sleep: float | None = None,
    tables: str = "",
) -> Path:
    """prove.toml + fleet.py in `folder`; `tables` is appended TOML ([local], [dask], ...)."""
    shutil.copy(HERE / "fleet_agent.py", folder / "fleet.py")
    axes = f"[axes.p]\ntype = \"continuous\"\nvalues = [{', '.join(map(str, values))}]\n"
    if sleep is not None:
        axes += f"[axes.sleep]\ntype = \"continuous\"\nvalues = [{sleep}]\n"
    spec = (
        f'target = "fleet:{target}"\n'
        'target_id = "fleet"\n'
        f"replicates = {replicates}\n"
        f"{axes}"
        "[declare]\n"
        'outcomes = ["ok", "fail"]\n'
        'failures = ["fail"]\n'
        f"{tables}"
    )
    (folder / "prove.toml").write_text(spec)
    return folder / "prove.toml"


def sweep_args(*extra: str) -> list[str]:
    """A sweep that runs without a question, on fixed seeds, whatever the design's power."""
    return ["sweep", "--yes", "--max-mde", "1", "--salt", SALT, *extra]


def read_rows(store: Path, name: str) -> list[dict[str, Any]]:
    """The run's episodes, read straight from its Parquet files with DuckDB."""
    import json

    import duckdb

    for manifest in store.glob("*/manifest.json"):
        document = json.loads(manifest.read_text())
        if document["name"] == name:
            if not any((manifest.parent / "episodes").glob("*.parquet")):
                return []  # a run stopped before its first batch (DuckDB refuses an empty glob)
            files = str(manifest.parent / "episodes" / "*.parquet")
            con = duckdb.connect()
            cursor = con.execute(
                "select cell, replicate, seed, outcome, t, horizon, case_id, error_kind, "
                f"error_message from read_parquet('{files}') order by cell, replicate"
            )
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    raise AssertionError(f"no run named {name!r} in {store}")


def essence(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What must not depend on the backend: which episode, its seed and how it ended."""
    return [(r["cell"], r["replicate"], r["seed"], r["outcome"], r["t"], r["case_id"]) for r in rows]


def assert_sweep_semantics(rows: list[dict[str, Any]]) -> None:
    """Every row is what a sequential sweep stores: the seed derived from (salt, cell,
    replicate) and the outcome, t and case the agent computes from (cfg, seed)."""
    import json

    from poisson_prove.design.seeding import episode_seed
    from tests.poisson_prove.backends.fleet_agent import _episode

    for row in rows:
        assert row["seed"] == episode_seed(SALT, row["cell"], row["replicate"]), row
        episode = _episode(json.loads(row["cell"]), row["seed"])
        got = (row["outcome"], row["t"], row["case_id"])
        assert got == (episode.outcome, episode.t, episode.meta["case_id"]), row


def assert_exact_plan(rows: list[dict[str, Any]], cells: int, replicates: int) -> None:
    keys = [(r["cell"], r["replicate"]) for r in rows]
    assert len(keys) == len(set(keys)), "duplicate (cell, replicate) rows"
    assert len({cell for cell, _ in keys}) == cells
    assert sorted({rep for _, rep in keys}) == list(range(replicates))
    assert len(keys) == cells * replicates
