"""`poisson-prove import inspect` on logs Inspect AI wrote, then `diff` against statsmodels."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import CLI, assert_clean_error
from tests.poisson_prove.importers.pairs import inspect_scores, mcnemar_exact


def _import(prove: CLI, *args: str) -> dict:
    result = prove("import", "inspect", *args, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)


def test_two_logs_pair_on_sample_and_epoch_and_diff_is_mcnemar(
    prove: CLI, inspect_logs: dict[str, Path]
) -> None:
    before = _import(prove, str(inspect_logs["before"]))
    after = _import(prove, str(inspect_logs["after"].parent))  # a folder of logs
    assert (before["episodes"], after["episodes"]) == (30, 30)
    assert after["paired_with"] == before["name"]

    result = prove("diff", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["method"] == "mcnemar" and report["paired"] is True
    assert (report["before"]["name"], report["after"]["name"]) == (before["name"], after["name"])
    (condition,) = report["conditions"]
    assert condition["label"] == "task times_seven"
    row = next(r for r in condition["outcomes"] if r["outcome"] == "incorrect")
    b, c, p = mcnemar_exact(
        inspect_scores(inspect_logs["before"]), inspect_scores(inspect_logs["after"]), failed={"I"}
    )
    assert (row["pairs"], row["b"], row["c"]) == (30, b, c)
    assert b > 0 and c > 0  # the change fixed some (sample, epoch) and broke others
    assert row["p_exact"] == pytest.approx(p, rel=1e-9)

    plain = prove("diff", "--plain")
    assert plain.returncode == 0 and "McNemar" in plain.stdout
    gate = prove("check", "--plain")
    # 30 pairs cannot show a rise of 0.2: a no-rise is inconclusive (5), not a pass.
    assert gate.returncode == (4 if report["any_worse"] else 5), gate.stderr
    lenient = prove("check", "--plain", "--allow-inconclusive")
    assert lenient.returncode == (4 if report["any_worse"] else 0), lenient.stderr


def test_manifest_records_sources_and_importing_twice_writes_nothing(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    log = inspect_logs["before"]
    first = _import(prove, str(log))
    again = prove("import", "inspect", str(log))
    assert again.returncode == 0 and again.stderr == ""
    assert f'already imported: these logs are run "{first["name"]}"' in again.stdout
    runs = [p for p in (workdir / "prove-runs").iterdir() if p.is_dir()]
    assert len(runs) == 1
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    (source,) = manifest["import"]["files"]
    assert source["sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    assert Path(source["path"]) == log.resolve()
    assert manifest["status"] == "complete" and manifest["counts"] == {
        "planned": 30,
        "done": 30,
        "errored": 0,
    }
    table = pq.read_table(runs[0] / "episodes")
    scores = inspect_scores(log)
    stored = {
        (json.loads(m)["sample_id"], json.loads(m)["epoch"]): o
        for m, o in zip(table["meta"].to_pylist(), table["outcome"].to_pylist(), strict=True)
    }
    assert stored == {k: {"C": "correct", "I": "incorrect"}[v] for k, v in scores.items()}
    listed = prove("runs", "--json")
    assert listed.returncode == 0 and first["name"] in listed.stdout


def test_errored_samples_are_errors_and_t_from_tokens(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    result = _import(prove, str(inspect_logs["errors"]), "--t", "tokens")
    assert result["errored"] == 3
    (run,) = [p for p in (workdir / "prove-runs").iterdir() if p.is_dir()]
    table = pq.read_table(run / "episodes").to_pylist()
    errored = [r for r in table if r["outcome"] is None]
    assert {json.loads(r["meta"])["sample_id"] for r in errored} == {"q7"}
    assert all(
        r["error_kind"] == "sample_error" and "tool sandbox went away" in r["error_message"] for r in errored
    )
    assert all(r["t"] > 12 for r in table if r["outcome"] is not None)  # 12 input tokens + output
    shown = prove("inspect", "latest", "--plain")
    assert shown.returncode == 0 and "tool sandbox went away" in shown.stdout


def test_map_overrides_the_outcome(prove: CLI, workdir: Path, inspect_logs: dict[str, Path]) -> None:
    _import(prove, str(inspect_logs["before"]), "--map", "I=wrong")
    (run,) = [p for p in (workdir / "prove-runs").iterdir() if p.is_dir()]
    manifest = json.loads((run / "manifest.json").read_text())
    assert "wrong" in manifest["failures"]
    assert set(pq.read_table(run / "episodes")["outcome"].to_pylist()) == {"correct", "wrong"}


def test_truncated_and_foreign_files_are_one_clear_error(
    prove: CLI, workdir: Path, tmp_path: Path, inspect_logs: dict[str, Path]
) -> None:
    eval_log = inspect_logs["after"]
    truncated = tmp_path / eval_log.name
    truncated.write_bytes(eval_log.read_bytes()[: eval_log.stat().st_size // 2])
    result = prove("import", "inspect", str(truncated))
    assert_clean_error(result, 1, str(truncated), "not a readable Inspect AI log")
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"hello": 1}')
    assert_clean_error(prove("import", "inspect", str(foreign)), 1, "not a readable Inspect AI log")
    assert_clean_error(prove("import", "inspect", str(tmp_path / "missing.eval")), 1, "does not exist")
    assert_clean_error(
        prove("import", "inspect", str(inspect_logs["before"]), "--map", "nonsense"), 2, "VALUE=OUTCOME"
    )
    assert not (workdir / "prove-runs").exists() or not any((workdir / "prove-runs").iterdir())


def test_the_same_sample_twice_in_one_import_is_refused(
    prove: CLI, tmp_path: Path, inspect_logs: dict[str, Path]
) -> None:
    copy = tmp_path / "copy" / inspect_logs["before"].name
    copy.parent.mkdir()
    shutil.copy(inspect_logs["before"], copy)
    result = prove("import", "inspect", str(inspect_logs["before"]), str(copy))
    assert_clean_error(result, 1, "is in two logs")


def test_a_change_of_model_still_pairs(prove: CLI, inspect_logs: dict[str, Path]) -> None:
    before = _import(prove, str(inspect_logs["before"]))
    after = _import(prove, str(inspect_logs["other_model"]))
    assert after["paired_with"] == before["name"]
    report = json.loads(prove("diff", "--json").stdout)
    (condition,) = report["conditions"]
    row = next(r for r in condition["outcomes"] if r["outcome"] == "incorrect")
    b, c, p = mcnemar_exact(
        inspect_scores(inspect_logs["before"]), inspect_scores(inspect_logs["other_model"]), failed={"I"}
    )
    assert (report["method"], row["b"], row["c"]) == ("mcnemar", b, c)
    assert row["p_exact"] == pytest.approx(p, rel=1e-9)
    both = prove("import", "inspect", str(inspect_logs["after"]), str(inspect_logs["other_model"]), "--json")
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout)["conditions"] == 2  # one import, two models: the model is an axis
