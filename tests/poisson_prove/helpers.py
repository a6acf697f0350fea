"""Writing small specs and targets for sweep tests, and reading a store back with DuckDB."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

SMALL_SPEC = """
target = "{target}"
target_id = "{target_id}"
t_unit = "steps"
replicates = {replicates}

[axes.x]
type = "categorical"
values = {values}

[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
successes = ["ok"]
"""

# A rollout whose outcome depends on the seed only, so paired runs can be checked row by row.
SEEDED_TARGET = """
import random
from poisson_prove import Episode

def rollout(cfg, seed):
    rng = random.Random(seed)
    return Episode("bad" if rng.random() < 0.3 else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def small_spec(
    folder: Path,
    *,
    target: str = "agent:rollout",
    target_id: str = "agent",
    replicates: int = 40,
    values: list[str] | None = None,
    name: str = "prove.toml",
    extra: str = "",
) -> Path:
    text = SMALL_SPEC.format(
        target=target,
        target_id=target_id,
        replicates=replicates,
        values=json.dumps(values or ["a", "b"]),
    )
    return write(folder, name, text + textwrap.dedent(extra))


def seeded_spec(workdir: Path, extra: str = "", **kwargs: Any) -> Path:
    """The small spec over the seeded target, both written into `workdir`."""
    write(workdir, "agent.py", SEEDED_TARGET)
    return small_spec(workdir, extra=extra, **kwargs)


def episodes(store: Path, run_id: str | None = None) -> list[dict[str, Any]]:
    """Every stored episode, read with DuckDB (an independent Parquet reader)."""
    import duckdb

    pattern = str(store / (run_id or "*") / "episodes" / "*.parquet")
    con = duckdb.connect()
    cursor = con.execute(f"select * from read_parquet('{pattern}') order by run_id, cell, replicate")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def manifests(store: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in store.glob("*/manifest.json")]
    return sorted(found, key=lambda m: (m["created"], m.get("created_ns") or 0, m["run_id"]))


def tree(folder: Path) -> list[str]:
    """Every path under `folder`, for 'nothing was written' checks."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts)


#: Libraries that --help and runs must not import (each costs a large part of a second).
HEAVY_MODULES = frozenset({"scipy", "pyarrow", "pandas", "numpy", "rich", "httpx", "torch", "duckdb"})


def imports_of(args: list[str], cwd: Path, home: Path) -> tuple[str, set[str]]:
    """Run the installed poisson-prove with Python's own import log (`-X importtime`, written
    to stderr); return its stdout and the top-level packages it imported."""
    import subprocess
    import sys

    from tests.conftest import isolated_env, script_path

    result = subprocess.run(
        [sys.executable, "-X", "importtime", script_path("poisson-prove"), *args],
        cwd=cwd,
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "poisson_prove" in imported  # the log is really there
    return result.stdout, imported
