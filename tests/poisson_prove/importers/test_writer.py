"""The importers' layout: a benchmark of cases (condition = non-case axes + sample), replicate =
epoch - 1, which axes make a condition, the manifest's record, and a killed import's run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from poisson_prove.errors import ProveError
from poisson_prove.importers import OutcomeMapping
from poisson_prove.importers._writer import (
    ImportedSample,
    ImportResult,
    LogSummary,
    ReadLogs,
    import_logs,
)
from poisson_prove.store.runs import RunStore


def _sample(model: str, sample_id: int | str, outcome: str | None, epoch: int = 1) -> ImportedSample:
    return ImportedSample(
        axes={"task": "qa", "scorer": "exact", "model": model},
        sample_id=sample_id,
        epoch=epoch,
        outcome=outcome,
        source="log",
        scorer="exact",
        value={"correct": "C", "incorrect": "I"}.get(outcome or ""),
        error_kind=None if outcome else "sample_error",
    )


def _import(
    store: RunStore, source: Path, samples: Sequence[ImportedSample], status: str = "success", **kw: Any
) -> ImportResult:
    planned = max(len(samples), 6)
    logs = ReadLogs(
        list(samples),
        [LogSummary(source, status, planned if status != "success" else len(samples), len(samples), 0)],
        "scorer",
        ("task", "scorer"),
    )
    return import_logs(
        store,
        tool="inspect",
        files=[source],
        read=lambda: logs,
        mapping=OutcomeMapping(),
        options=kw.pop("options", {}),
        t_unit="sample",
        **kw,
    )


def test_a_condition_is_its_non_case_axes_and_the_sample(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    source = tmp_path / "log.json"
    source.write_text("{}")
    samples = [_sample("a", f"s{i}", "correct", epoch) for i in range(3) for epoch in (1, 2)]
    result = _import(store, source, samples)
    manifest = result.run.manifest
    assert [c["cfg"] for c in manifest["cells"]] == [
        {"task": "qa", "scorer": "exact", "sample": f"s{i}"} for i in range(3)
    ]
    assert manifest["axis_order"] == ["task", "scorer", "sample"]
    assert manifest["spec"]["axes"]["sample"] == {
        "type": "categorical",
        "values": ["s0", "s1", "s2"],
        "cases": True,
    }
    assert manifest["import"]["constant"] == {"model": "a"}  # the same everywhere: not an axis
    assert (manifest["replicates"], result.groups, result.cases, result.conditions) == (2, 1, 3, 3)
    table = pq.read_table(result.run.episodes_dir).to_pylist()
    assert sorted((r["case_id"], r["replicate"]) for r in table) == [
        (f"s{i}", e) for i in range(3) for e in (0, 1)
    ]
    assert all(r["t"] == 1.0 and r["horizon"] == 1.0 for r in table)


def test_a_varying_model_is_an_axis_and_shares_no_condition(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    source = tmp_path / "log.json"
    source.write_text("{}")
    first = _import(store, source, [_sample("a", i, "correct") for i in range(3)])
    source.write_text("{} ")
    two = _import(store, source, [_sample(m, i, "incorrect") for m in ("a", "b") for i in range(3)])
    assert two.groups == 2 and two.run.manifest["axis_order"] == ["task", "scorer", "model", "sample"]
    assert two.paired_with is None  # no condition shared with the first import
    assert first.run.manifest["source"] == {"tool": "inspect", "logs": first.run.manifest["source"]["logs"]}


def test_a_seed_is_the_same_in_every_import_of_the_tool_for_one_sample_and_epoch(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text("1")
    two.write_text("2")
    first = _import(store, one, [_sample("a", i, "correct", e) for i in range(2) for e in (1, 2)])
    second = _import(store, two, [_sample("a", i, "incorrect", e) for i in range(2) for e in (1, 2)])
    assert second.paired_with == first.run.name
    seeds = [
        {(r["cell"], r["replicate"]): r["seed"] for r in pq.read_table(run.run.episodes_dir).to_pylist()}
        for run in (first, second)
    ]
    assert seeds[0] == seeds[1] and len(set(seeds[0].values())) == 4


def test_an_unfinished_log_makes_a_partial_run_and_an_import_of_nothing_is_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    source = tmp_path / "log.eval"
    source.write_text("x")
    result = _import(store, source, [_sample("a", 1, "correct"), _sample("a", 2, None)], status="cancelled")
    assert result.partial and result.run.manifest["finished"]
    assert result.run.manifest["counts"] == {"planned": 6, "done": 2, "errored": 1}
    assert [u.status for u in result.unfinished] == ["cancelled"]
    source.write_text("y")
    with pytest.raises(ProveError, match="did not finish \\(status started\\) and holds no sample"):
        _import(store, source, [], status="started")


def test_a_killed_import_is_replaced_by_the_next_import_of_the_same_logs(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    source = tmp_path / "log.json"
    source.write_text("{}")
    samples = [_sample("a", i, "correct") for i in range(3)]
    done = _import(store, source, samples)
    # What a kill between the manifest and the batch leaves: the manifest without `finished`.
    manifest = dict(done.run.manifest, finished=None, status="partial")
    (done.run.path / "manifest.json").write_text(json.dumps(manifest))
    for batch in done.run.batch_files():
        batch.unlink()
    again = _import(store, source, samples)
    assert again.created and again.replaced == done.run.name and again.run.name == done.run.name
    assert [r.run_id for r in store.runs()] == [again.run.run_id]
    assert not (store.root / ".import-removed").exists()
    assert _import(store, source, samples).created is False


def test_the_same_sample_and_epoch_twice_is_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    source = tmp_path / "log.json"
    source.write_text("{}")
    with pytest.raises(ProveError, match="is in two logs"):
        _import(store, source, [_sample("a", 1, "correct"), _sample("a", 1, "incorrect")])
    assert store.runs() == []
    assert not store.root.exists()  # refused before the store is touched: not even its import lock file
