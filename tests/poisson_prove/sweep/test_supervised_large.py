"""A sweep large enough for its whole fast path, through the installed `poisson-prove sweep`
with its defaults: the supervisor derives the seeds ahead (design.seeds_ahead), a writer thread
writes the batches and the running compaction (sweep.batches, store.compaction). Read back with
DuckDB: every planned episode once, on exactly the seed the plan's hash gives, in one compacted
file that names every batch it replaced."""

from __future__ import annotations

import json

import duckdb
import pyarrow.parquet as pq

from poisson_prove.design.seeding import episode_seeds
from poisson_prove.store.info import COMPACTED_SUFFIX, REPLACES_KEY
from tests.poisson_prove.helpers import small_spec, write

AGENT = """
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("ok" if seed % 10 else "bad", 1 + seed % 5, 5, {"case_id": cfg["x"], "seed": seed})
"""


def test_a_large_sweep_stores_every_episode_once_on_its_planned_seed(prove, workdir) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=6_000, values=["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"])
    swept = prove("sweep", "--yes", "--max-mde", "1", "--batch-size", "7000", "--json", timeout=300)
    assert swept.returncode == 0, swept.stderr
    document = json.loads(swept.stdout)
    assert document["counts"]["done"] == 60_000 and document["run"]["status"] == "complete"
    (run,) = [p for p in (workdir / "prove-runs").iterdir() if p.is_dir()]
    salt = json.loads((run / "manifest.json").read_text())["salt"]
    (only,) = sorted((run / "episodes").iterdir())  # no batch or temporary file left
    assert only.name.endswith(COMPACTED_SUFFIX)
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    batches = [e["file"] for e in events if e["event"] == "batch"]
    (compact,) = [e for e in events if e["event"] == "compact"]
    assert len(batches) >= 9 and compact["replaces"] == batches and compact["rows"] == 60_000
    assert sorted(json.loads(pq.read_metadata(only).metadata[REPLACES_KEY.encode()])) == sorted(batches)
    rows = duckdb.connect().execute(
        f"select cell, replicate, seed, meta from read_parquet('{only}') order by cell, replicate"
    ).fetchall()
    assert len(rows) == len({(cell, replicate) for cell, replicate, _, _ in rows}) == 60_000
    by_cell: dict[str, list[tuple[int, int]]] = {}
    for cell, replicate, seed, meta in rows:
        assert json.loads(meta)["seed"] == seed  # what the rollout was given is what is stored
        by_cell.setdefault(cell, []).append((replicate, seed))
    for cell, pairs in by_cell.items():
        assert [r for r, _ in pairs] == list(range(6_000))
        assert [s for _, s in pairs] == episode_seeds(salt, cell, range(6_000)), cell
