"""A run's episode table on the dashboard: flipped against its twin in the partner run (counted
here independently from the stored rows, read back with DuckDB), the failed and flipped listed
first, the first of them with their stored meta and spans, and the first failed ones in full."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np

from poisson_prove.dashboard.episodes import EPISODES_LISTED, SPANS_LISTED, episode_list, failed_episodes
from tests.poisson_prove.runs import Episodes, write_run

CFG = {"ticket": "refund", "temperature": 0.2}


def _run(store: Path, flips: set[int], paired_with=None):
    episodes = Episodes()
    for r in range(400):
        outcome = "resolved" if r % 3 else "unresolved"
        if r in flips:
            outcome = "unresolved" if outcome == "resolved" else "resolved"
        episodes.add(CFG, r, outcome, 5.0, 20.0, meta={"r": r}, spans=[{"name": f"step {r}"}])
    return write_run(store, episodes, paired_with=paired_with)


def _stored(info) -> dict[tuple[int, int], str]:
    rows = duckdb.sql(f"select replicate, seed, outcome from read_parquet('{info.episodes_dir}/*.parquet')")
    return {(r, s): o for r, s, o in rows.fetchall()}


def test_the_table_counts_flips_against_the_twins_and_lists_failed_and_flipped_first(tmp_path: Path) -> None:
    store = tmp_path / "prove-runs"
    before = _run(store, set())
    after = _run(store, {1, 2, 4, 9, 300}, paired_with=before)
    ours, theirs = _stored(after), _stored(before)
    flipped = {key for key in ours if key in theirs and ours[key] != theirs[key]}
    failed = {key for key, outcome in ours.items() if outcome == "unresolved"}

    table = episode_list(after, before, {}, ["unresolved", "timeout"])
    assert (table.partner, table.total, table.twins, table.flipped) == (before.name, 400, 400, len(flipped))
    assert len(table.rows) == min(EPISODES_LISTED, 400)
    first = [(e.replicate, e.seed) for e in table.rows[: len(failed | flipped)]]
    assert set(first) == failed | flipped  # the failed and the flipped come first
    for row in table.rows:
        assert row.flipped == ((row.replicate, row.seed) in flipped)
        assert row.twin == theirs[(row.replicate, row.seed)]
    detailed = [e for e in table.rows if e.detail]
    assert detailed and len(detailed) <= SPANS_LISTED
    for row in detailed:
        assert json.loads(row.meta or "") == {"r": row.replicate}
        assert json.loads(row.spans or "") == [{"name": f"step {row.replicate}"}]

    alone = episode_list(after, None, {}, ["unresolved", "timeout"])
    assert (alone.partner, alone.twins, alone.flipped) == (None, 0, 0)
    assert all(e.flipped is None and e.twin is None for e in alone.rows)


def test_the_first_failed_episodes_are_read_in_full_for_the_chosen_rows_only(tmp_path: Path) -> None:
    info = _run(tmp_path / "prove-runs", set())
    shown = failed_episodes(info, np.array([0, 3]), {})
    assert [(e.replicate, e.outcome) for e in shown] == [(0, "unresolved"), (3, "unresolved")]
    assert json.loads(shown[0].meta or "") == {"r": 0}
    assert failed_episodes(info, np.array([], dtype=int), {}) == ()
