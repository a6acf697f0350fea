"""A copied batch through the installed script: every command refuses the run naming both files,
never double-counting; `runs` still lists the other run; a resume is refused before any work."""

from __future__ import annotations

import json
import shutil

from tests.conftest import assert_clean_error


def test_a_copied_batch_is_refused_by_diff_check_runs_and_resume(prove, two_runs) -> None:
    run_a, _ = two_runs
    import pyarrow.parquet as pq

    first = sorted((run_a / "episodes").glob("*.parquet"))[0]  # the sweep's compacted file
    shutil.copy(first, first.with_name("batch-999999-dddddd.parquet"))
    rows = pq.ParquetFile(first).metadata.num_rows
    named = (f"stores {rows} episodes more than once", first.name, "batch-999999-dddddd.parquet")
    for verb in (["diff", "a", "b"], ["diff", "a", "b", "--json"], ["check", "a", "b"], ["inspect", "a"]):
        assert_clean_error(prove(*verb), 1, *named)
    runs = prove("runs")
    assert_clean_error(runs, 1, *named)
    assert "next: move the copies out of" in runs.stderr
    listed = [line.split()[0] for line in runs.stdout.splitlines()[1:]]
    assert listed == ["b"]  # the other run is still listed
    # A complete run: nothing to resume; a partial one with a copy is refused before any work.
    manifest = json.loads((run_a / "manifest.json").read_text())
    (run_a / "manifest.json").write_text(json.dumps({**manifest, "status": "partial"}))
    before = sorted(p.name for p in (run_a / "episodes").iterdir())
    assert_clean_error(prove("sweep", "--resume", "a", "--yes"), 1, *named)
    assert sorted(p.name for p in (run_a / "episodes").iterdir()) == before


def test_a_manifest_whose_conditions_or_names_are_of_the_wrong_shape_is_not_listed() -> None:
    """`cells: 5` (or outcomes that are not names) keeps the run out of runs/diff/check/inspect
    with its reason, instead of a TypeError in the comparison."""
    from poisson_prove.store.checks import listing_problem

    good = {"run_id": "20261201T000000-abcdef", "name": "a", "status": "complete"}
    assert listing_problem(good) is None
    assert listing_problem({**good, "cells": [{"key": "k", "label": "x a", "cfg": {"x": "a"}}]}) is None
    cases = {
        "cells": (5, "cells is not a list of conditions (5)"),
        "outcomes": ("done", "outcomes is not a list of names ('done')"),
        "failures": ([1], "failures is not a list of names ([1])"),
        "axis_order": ({"x": 1}, "axis_order is not a list of names ({'x': 1})"),
    }
    for key, (value, problem) in cases.items():
        assert listing_problem({**good, key: value}) == problem
    shapeless = {**good, "cells": [{"key": "k"}]}
    assert listing_problem(shapeless) == "cells #1 is not an object with key, label and cfg"
