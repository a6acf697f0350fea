"""`poisson-prove import lm-eval` on `--log_samples` output the real lm_eval wrote (dummy model),
checked against the samples files read with plain json and the store read with pyarrow."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.importers.lm_eval_logs import read_logs
from poisson_prove.importers.outcomes import OutcomeMapping
from poisson_prove.stats.clustered import sign_flip
from tests.conftest import CLI, assert_clean_error
from tests.poisson_prove.importers.pairs import (
    lm_eval_records,
    lm_eval_scores,
    mcnemar_exact,
    per_case,
    stored_pairs,
    stored_rows,
)


def _import(prove: CLI, *args: str) -> dict[str, Any]:
    result = prove("import", "lm-eval", *args, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)


def _run(workdir: Path, document: dict[str, Any]) -> Path:
    return workdir / "prove-runs" / document["run_id"]


def test_a_task_is_a_benchmark_of_documents_paired_on_doc_id(
    prove: CLI, workdir: Path, lm_eval_outputs: dict[str, Path]
) -> None:
    before = _import(prove, str(lm_eval_outputs["before"]))
    after = _import(prove, str(lm_eval_outputs["after"]))
    assert (before["episodes"], before["cases"], before["groups"]) == (40, 40, 1)
    assert after["paired_with"] == before["name"]

    manifest = json.loads((_run(workdir, before) / "manifest.json").read_text())
    axes = manifest["spec"]["axes"]
    assert list(axes) == ["task", "metric", "filter", "sample"] == manifest["axis_order"]
    assert axes["sample"]["cases"] is True and axes["sample"]["values"] == list(range(40))
    assert (manifest["outcomes"], manifest["replicates"]) == (["correct", "incorrect"], 1)
    records = {r["doc_id"]: r for r in lm_eval_records(lm_eval_outputs["before"])}
    for row in stored_rows(_run(workdir, before)):
        cfg = json.loads(row["cfg"])
        assert cfg == {"task": "tiny_mc", "metric": "acc", "filter": "none", "sample": cfg["sample"]}
        assert (row["case_id"], row["replicate"]) == (str(cfg["sample"]), 0)
        assert json.loads(row["meta"])["doc_hash"] == records[cfg["sample"]]["doc_hash"]
        assert row["outcome"] == ("correct" if records[cfg["sample"]]["acc"] == 1.0 else "incorrect")

    scores = [lm_eval_scores(lm_eval_outputs[k]) for k in ("before", "after")]
    stored = stored_pairs(_run(workdir, before), _run(workdir, after), {"incorrect"})
    assert stored == {str(k): v for k, v in per_case(*scores, failed={0.0}).items()}
    b, c, p = mcnemar_exact(*scores, failed={0.0})
    assert b + c > 0  # the two seeds disagree on some documents
    # One repeat: the per-case sign-flip test over these pairs is McNemar over documents.
    counts = np.array(list(stored.values()))
    assert sign_flip(counts[:, 0], counts[:, 1]).p_exact == pytest.approx(p, abs=1e-12)

    report = json.loads(prove("diff", before["name"], after["name"], "--json").stdout)
    assert report["method"] == "mcnemar"
    counted = [r for cond in report["conditions"] for r in cond["outcomes"] if r["outcome"] == "incorrect"]
    assert (sum(r["b"] for r in counted), sum(r["c"] for r in counted)) == (b, c)

    (samples,) = lm_eval_outputs["before"].rglob("samples_*.jsonl")
    hashes = {f["sha256"] for f in manifest["import"]["files"]}
    assert hashlib.sha256(samples.read_bytes()).hexdigest() in hashes
    assert manifest["import"]["constant"]["model"] == "dummy"  # the same in every log: not an axis
    (results,) = lm_eval_outputs["before"].rglob("results_*.json")
    raw = json.loads(results.read_text())
    assert {k: manifest["source"][k] for k in ("tool", "model", "n_shot", "task_hash", "metrics")} == {
        "tool": "lm-eval",
        "model": raw["config"]["model"],
        "n_shot": raw["n-shot"]["tiny_mc"],
        "task_hash": raw["task_hashes"]["tiny_mc"],
        "metrics": ["acc"],
    }
    again = prove("import", "lm-eval", str(lm_eval_outputs["before"]))
    assert again.returncode == 0 and "already imported" in again.stdout


def test_other_documents_under_the_same_doc_ids_are_never_paired(
    prove: CLI, workdir: Path, lm_eval_outputs: dict[str, Path]
) -> None:
    before = _import(prove, str(lm_eval_outputs["before"]))
    shuffled = {r["doc_id"]: r["doc_hash"] for r in lm_eval_records(lm_eval_outputs["shuffled"])}
    original = {r["doc_id"]: r["doc_hash"] for r in lm_eval_records(lm_eval_outputs["before"])}
    moved = sorted(d for d in original if original[d] != shuffled[d])
    assert len(moved) > 5
    refused = prove("import", "lm-eval", str(lm_eval_outputs["shuffled"]))
    assert_clean_error(
        refused,
        1,
        f"doc_id {', '.join(str(d) for d in moved[:5])} and {len(moved) - 5} more of task tiny_mc",
        f'than in run "{before["name"]}" (their doc_hash differs)',
        "next: --unpaired",
    )
    assert len([p for p in (workdir / "prove-runs").iterdir() if p.is_dir()]) == 1

    unpaired = _import(prove, str(lm_eval_outputs["shuffled"]), "--unpaired")
    assert unpaired["paired_with"] is None
    manifests = [json.loads((_run(workdir, d) / "manifest.json").read_text()) for d in (before, unpaired)]
    assert manifests[0]["salt"] != manifests[1]["salt"]
    assert stored_pairs(_run(workdir, before), _run(workdir, unpaired), {"incorrect"}) == {}
    fisher = prove("diff", before["name"], unpaired["name"], "--json")
    assert fisher.returncode == 0 and json.loads(fisher.stdout)["method"] == "fisher"


def test_different_metrics_never_pair_and_several_are_each_their_own_group(
    prove: CLI, workdir: Path, lm_eval_outputs: dict[str, Path]
) -> None:
    norm = _import(prove, str(lm_eval_outputs["before"]), "--metric", "acc_norm")
    plain = _import(prove, str(lm_eval_outputs["after"]))  # the first metric the records list: acc
    assert plain["paired_with"] is None
    assert_clean_error(prove("diff", norm["name"], plain["name"]), 1, "share no condition")

    metrics = ("--metric", "acc", "--metric", "acc_norm", "--metric", "acc")
    before = _import(prove, str(lm_eval_outputs["before"]), *metrics)
    after = _import(prove, str(lm_eval_outputs["after"]), *metrics)
    assert (before["groups"], before["episodes"], after["paired_with"]) == (2, 80, before["name"])
    manifest = json.loads((_run(workdir, before) / "manifest.json").read_text())
    assert manifest["import"]["outcomes_by"] == {
        "axis": "metric",
        "outcomes": {"acc": ["correct", "incorrect"], "acc_norm": ["correct", "incorrect"]},
    }
    runs = _run(workdir, before), _run(workdir, after)
    for metric in ("acc", "acc_norm"):
        scores = [lm_eval_scores(lm_eval_outputs[k], metric) for k in ("before", "after")]
        expected = {str(k): v for k, v in per_case(*scores, failed={0.0}).items()}
        assert stored_pairs(*runs, {"incorrect"}, metric=metric) == expected


def test_truncated_or_foreign_samples_are_one_clear_error(
    prove: CLI, workdir: Path, tmp_path: Path, lm_eval_outputs: dict[str, Path]
) -> None:
    (samples,) = lm_eval_outputs["before"].rglob("samples_*.jsonl")
    truncated = tmp_path / samples.name
    text = samples.read_text()
    truncated.write_text(text[: len(text) // 2])  # cut inside a line
    assert_clean_error(prove("import", "lm-eval", str(truncated)), 1, "is not JSON", str(truncated))
    foreign = tmp_path / "results.jsonl"
    foreign.write_text('{"a": 1}\n')
    assert_clean_error(prove("import", "lm-eval", str(foreign)), 1, "not an lm-eval samples file")
    assert_clean_error(prove("import", "lm-eval", str(tmp_path / "empty-folder")), 1, "does not exist")
    wrong_metric = prove("import", "lm-eval", str(samples), "--metric", "f1")
    assert_clean_error(wrong_metric, 2, 'no metric "f1"', "--metric acc")
    assert not (workdir / "prove-runs").exists() or not any((workdir / "prove-runs").glob("*/manifest.json"))


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"doc_id": [0], "metrics": ["acc"], "acc": 1}', "doc_id is a list, not a number or text"),
        ('{"doc_id": true, "metrics": ["acc"], "acc": 1}', "doc_id is true, not a number or text"),
        ('{"doc_id": 0, "filter": {"a": 1}, "metrics": ["acc"], "acc": 1}', "filter is a table, not text"),
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
    ],
)
def test_a_record_of_the_wrong_shape_is_refused_naming_its_line(tmp_path: Path, line: str, says: str) -> None:
    """A doc_id or filter that is no value an axis holds, or a line too deep for json, is a
    refusal naming the line (these were unexpected failures: an unhashable doc_id, a RecursionError)."""
    samples = tmp_path / "samples_t_2026-12-01T00-00-00.000000.jsonl"
    samples.write_text('{"doc_id": 5, "metrics": ["acc"], "acc": 1}\n' + line + "\n")
    with pytest.raises(ProveError, match=f"line 2 of .*{says}") as raised:
        read_logs([samples], OutcomeMapping())
    assert raised.value.exit_code == ProveExit.REFUSED


def test_metrics_that_are_not_a_list_of_names_give_no_metric(tmp_path: Path) -> None:
    samples = tmp_path / "samples_t_2026-12-01T00-00-00.000000.jsonl"
    samples.write_text(
        '{"doc_id": 0, "metrics": 5, "acc": 1}\n{"doc_id": 1, "metrics": [["acc"]], "acc": 1}\n'
    )
    with pytest.raises(ProveError, match=r'line 1 of .* has no metric ""') as raised:
        read_logs([samples], OutcomeMapping())
    assert raised.value.exit_code == ProveExit.USAGE
    read = read_logs([samples], OutcomeMapping(), metrics=["acc"])
    assert [s.outcome for s in read.samples] == ["correct", "correct"]
