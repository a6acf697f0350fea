"""The importers' layout rules: the outcome mapping, stable replicates, which axes make a condition."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from poisson_prove.errors import ProveError
from poisson_prove.importers import OutcomeMapping
from poisson_prove.importers._writer import ImportedSample, replicate_of, write_import
from poisson_prove.store.runs import RunStore


def test_default_mapping_reads_inspect_letters_numbers_and_booleans() -> None:
    mapping = OutcomeMapping()
    assert [mapping.outcome(v) for v in ("C", "I", "P", "N", 1, 0.0, "1.0", True, False, 0.5)] == [
        "correct",
        "incorrect",
        "partial",
        "incorrect",
        "correct",
        "incorrect",
        "correct",
        "correct",
        "incorrect",
        "partial",
    ]
    assert mapping.outcome(2) is None and mapping.outcome("Paris") is None
    overridden = mapping.with_overrides(["P=incorrect", "N=no_answer"])
    assert (overridden.outcome("P"), overridden.outcome("N")) == ("incorrect", "no_answer")
    assert overridden.outcomes[0] == "correct" and "no_answer" in overridden.outcomes
    with pytest.raises(ProveError) as bad:
        mapping.with_overrides(["P"])
    assert bad.value.exit_code == 2


def test_replicates_are_stable_and_distinct() -> None:
    assert replicate_of(7, 1) == replicate_of("7", 1) == 7000
    assert replicate_of(7, 3) == 7002
    ids = [f"sample-{i}" for i in range(2000)]
    numbers = {replicate_of(s, e) for s in ids for e in (1, 2)}
    assert len(numbers) == 4000 and all(0 <= n < 2**31 for n in numbers)
    assert replicate_of("sample-3", 2) == replicate_of("sample-3", 2)


def _sample(model: str, sample_id: int, outcome: str) -> ImportedSample:
    return ImportedSample(
        axes={"task": "qa", "model": model}, sample_id=sample_id, epoch=1, outcome=outcome, source="log"
    )


def test_model_is_an_axis_only_when_it_varies_in_one_import(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    source = tmp_path / "log.json"
    source.write_text("{}")
    one = write_import(
        store,
        tool="inspect",
        samples=[_sample("a", i, "correct") for i in range(3)],
        sources=[source],
        mapping=OutcomeMapping(),
        options={},
        t_unit="sample",
    )
    assert [c["cfg"] for c in one.run.manifest["cells"]] == [{"task": "qa"}]
    assert one.run.manifest["import"]["constant"] == {"model": "a"}
    source.write_text("{} ")
    two = write_import(
        store,
        tool="inspect",
        samples=[_sample(m, i, "incorrect") for m in ("a", "b") for i in range(3)],
        sources=[source],
        mapping=OutcomeMapping(),
        options={},
        t_unit="sample",
    )
    assert [c["cfg"] for c in two.run.manifest["cells"]] == [
        {"model": "a", "task": "qa"},
        {"model": "b", "task": "qa"},
    ]
    assert two.paired_with is None  # no condition shared with the first import
    table = pq.read_table(two.run.episodes_dir).to_pylist()
    assert {json.loads(r["cfg"])["model"] for r in table} == {"a", "b"}
    assert all(r["case_id"] is None and r["t"] == 1.0 and r["horizon"] == 1.0 for r in table)
