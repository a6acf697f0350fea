"""`poisson-prove import lm-eval` on `--log_samples` output the real lm_eval wrote (dummy model)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import CLI, assert_clean_error
from tests.poisson_prove.importers.pairs import lm_eval_scores, mcnemar_exact


def _import(prove: CLI, *args: str) -> dict:
    result = prove("import", "lm-eval", *args, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)


def test_two_runs_pair_on_doc_id_and_diff_is_mcnemar(
    prove: CLI, workdir: Path, lm_eval_outputs: dict[str, Path]
) -> None:
    before = _import(prove, str(lm_eval_outputs["before"]))
    after = _import(prove, str(lm_eval_outputs["after"]))
    assert (before["episodes"], after["episodes"]) == (40, 40)
    assert after["paired_with"] == before["name"]

    result = prove("diff", before["name"], after["name"], "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["method"] == "mcnemar"
    (condition,) = report["conditions"]
    assert condition["label"].startswith("task tiny_mc")
    row = next(r for r in condition["outcomes"] if r["outcome"] == "incorrect")
    b, c, p = mcnemar_exact(
        lm_eval_scores(lm_eval_outputs["before"]), lm_eval_scores(lm_eval_outputs["after"]), failed={0.0}
    )
    assert (row["pairs"], row["b"], row["c"]) == (40, b, c)
    assert b + c > 0  # the two seeds disagree on some documents
    assert row["p_exact"] == pytest.approx(p, rel=1e-9)

    (samples,) = lm_eval_outputs["before"].rglob("samples_*.jsonl")
    manifest = json.loads((workdir / "prove-runs" / before["run_id"] / "manifest.json").read_text())
    hashes = {f["sha256"] for f in manifest["import"]["files"]}
    assert hashlib.sha256(samples.read_bytes()).hexdigest() in hashes
    assert manifest["import"]["constant"]["model"] == "dummy"  # the same in every log: not an axis
    again = prove("import", "lm-eval", str(lm_eval_outputs["before"]))
    assert again.returncode == 0 and "already imported" in again.stdout


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
