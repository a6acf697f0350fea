"""`poisson-prove import inspect` on logs Inspect AI wrote (tests/.../inspect_task.py, run for
real), checked against the logs read independently (plain json / zipfile) and the store read
with pyarrow: an imported task is a benchmark whose cases are its samples."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from poisson_prove.stats.tests import mcnemar
from tests.conftest import CLI, assert_clean_error, isolated_env
from tests.poisson_prove.importers.pairs import (
    cancelled,
    inspect_samples,
    inspect_scores,
    mcnemar_exact,
    per_case,
    stored_pairs,
    stored_rows,
)


def _import(prove: CLI, *args: str) -> dict[str, Any]:
    result = prove("import", "inspect", *args, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)


def _manifest(workdir: Path, document: dict[str, Any]) -> dict[str, Any]:
    return json.loads((workdir / "prove-runs" / document["run_id"] / "manifest.json").read_text())


def _run(workdir: Path, document: dict[str, Any]) -> Path:
    return workdir / "prove-runs" / document["run_id"]


def _run_named(prove: CLI, workdir: Path, name: str) -> Path:
    listed = json.loads(prove("runs", "--json").stdout)["runs"]
    (run_id,) = [r["id"] for r in listed if r["name"] == name]
    return workdir / "prove-runs" / run_id


def _only_error_lines(result: subprocess.CompletedProcess[str]) -> None:
    assert all(line.startswith(("error: ", "next: ")) for line in result.stderr.splitlines()), result.stderr


def test_an_imported_task_is_a_benchmark_whose_cases_are_its_samples(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    eval_set = inspect_logs["before"].parent
    assert {"eval-set.json", "logs.json"} <= {p.name for p in eval_set.iterdir()}  # an eval-set folder
    before = _import(prove, str(eval_set))
    after = _import(prove, str(inspect_logs["after"]))
    assert before["files"] == [str(inspect_logs["before"])]  # Inspect's own listing: the log only
    assert (before["episodes"], before["cases"], before["groups"], before["status"]) == (
        30,
        10,
        1,
        "complete",
    )
    assert after["paired_with"] == before["name"]

    manifest = _manifest(workdir, before)
    ids = sorted({s["id"] for s in inspect_samples(inspect_logs["before"])})
    axes = manifest["spec"]["axes"]
    assert list(axes) == ["task", "scorer", "sample"] == manifest["axis_order"]
    assert axes["sample"]["cases"] is True and sorted(axes["sample"]["values"]) == ids
    assert (axes["task"]["values"], axes["scorer"]["values"]) == (["times_seven"], ["includes"])
    assert not axes["task"].get("cases") and not axes["scorer"].get("cases")
    # includes() says C or I: correct and incorrect only, no `partial` test that cannot fire
    assert (manifest["outcomes"], manifest["failures"]) == (["correct", "incorrect"], ["incorrect"])
    scores = inspect_scores(inspect_logs["before"])
    rows = stored_rows(_run(workdir, before))
    for row in rows:
        cfg, meta = json.loads(row["cfg"]), json.loads(row["meta"])
        assert cfg == {"task": "times_seven", "scorer": "includes", "sample": meta["sample_id"]}
        assert row["case_id"] == meta["sample_id"] and row["replicate"] == meta["epoch"] - 1
        assert (
            row["outcome"] == {"C": "correct", "I": "incorrect"}[scores[(meta["sample_id"], meta["epoch"])]]
        )
    assert len(rows) == len(scores) == 30

    expected = per_case(scores, inspect_scores(inspect_logs["after"]), failed={"I"})
    assert stored_pairs(_run(workdir, before), _run(workdir, after), {"incorrect"}) == expected
    b, c, _ = mcnemar_exact(scores, inspect_scores(inspect_logs["after"]), failed={"I"})
    assert b > 0 and c > 0  # the change fixed some (sample, epoch) and broke others

    result = prove("diff", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["method"] == "mcnemar" and report["paired"] is True
    assert (report["before"]["name"], report["after"]["name"]) == (before["name"], after["name"])
    counted = [r for cond in report["conditions"] for r in cond["outcomes"] if r["outcome"] == "incorrect"]
    assert (sum(r["b"] for r in counted), sum(r["c"] for r in counted)) == (b, c)
    gate = prove("check", "--plain")
    assert gate.returncode in (4, 5), gate.stderr  # 30 pairs cannot pass a gate of 0.2: never 0


def test_evals_that_did_not_finish_are_partial_runs_and_cancelled_samples_are_left_out(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    for label, status in (("failed", "error"), ("cancelled", "cancelled")):
        log = inspect_logs[label]
        samples = inspect_samples(log)
        stopped = sum(1 for s in samples if cancelled(s))
        assert stopped >= 1  # the eval's stop cancelled a running sample
        result = prove("import", "inspect", str(log), "--name", label)
        assert result.returncode == 0, result.stderr
        (warning,) = result.stderr.splitlines()
        assert warning.startswith(f"warning: {log} is an eval that did not finish (status {status}")
        assert f"{len(samples) - stopped} of its 30 samples are imported" in warning
        assert f"{stopped} cancelled sample" in warning and f'run "{label}" is partial' in warning
        assert f"next: inspect eval-retry {log}, then import the log it writes" in result.stdout
        run = _run_named(prove, workdir, label)
        manifest = json.loads((run / "manifest.json").read_text())
        rows = stored_rows(run)
        assert manifest["status"] == "partial" and manifest["finished"]
        assert manifest["counts"] == {
            "planned": 30,
            "done": len(samples) - stopped,
            "errored": sum(1 for s in samples if s.get("error") and not cancelled(s)),
        }
        assert manifest["import"]["cancelled"] == stopped
        assert len(rows) == len(samples) - stopped
        assert not any("Cancelled" in (r["error_message"] or "") for r in rows)  # not the agent's errors
    listed = json.loads(prove("runs", "--json").stdout)["runs"]
    assert {r["name"]: r["status"] for r in listed} == {"failed": "partial", "cancelled": "partial"}

    killed = prove("import", "inspect", str(inspect_logs["killed"]))
    assert_clean_error(killed, 1, "did not finish (status started) and holds no sample")
    assert f"next: inspect eval-retry {inspect_logs['killed']}" in killed.stderr
    assert len(json.loads(prove("runs", "--json").stdout)["runs"]) == 2


def test_runs_scored_by_different_scorers_are_never_paired(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    closeness = _import(prove, str(inspect_logs["before"]), "--scorer", "closeness")
    includes = _import(prove, str(inspect_logs["after"]))
    assert includes["paired_with"] is None
    cells = [{c["key"] for c in _manifest(workdir, d)["cells"]} for d in (closeness, includes)]
    assert cells[0] and cells[1] and not cells[0] & cells[1]  # different conditions
    assert _manifest(workdir, closeness)["source"]["scorers"] == ["closeness"]
    assert _manifest(workdir, includes)["source"]["scorers"] == ["includes"]
    refused = prove("diff", closeness["name"], includes["name"])
    assert_clean_error(refused, 1, closeness["name"], includes["name"])


def test_several_scorers_are_each_their_own_group_with_their_own_outcomes(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    scorers = ("--scorer", "includes", "--scorer", "closeness")
    before = _import(prove, str(inspect_logs["before"]), *scorers)
    after = _import(prove, str(inspect_logs["after"]), *scorers)
    assert (before["groups"], before["cases"], before["episodes"]) == (2, 10, 60)
    assert after["paired_with"] == before["name"]
    manifest = _manifest(workdir, before)
    assert manifest["import"]["outcomes_by"] == {
        "axis": "scorer",
        "outcomes": {"includes": ["correct", "incorrect"], "closeness": ["correct", "incorrect", "partial"]},
    }
    assert manifest["outcomes"] == ["correct", "incorrect", "partial"]
    runs = _run(workdir, before), _run(workdir, after)
    for scorer, outcome, values in (("includes", "incorrect", {"I"}), ("closeness", "partial", {0.5})):
        logged = [inspect_scores(inspect_logs[k], scorer) for k in ("before", "after")]
        assert stored_pairs(*runs, {outcome}, scorer=scorer) == per_case(*logged, failed=values)
    report = json.loads(prove("diff", "--json").stdout)
    assert {json.loads(c["key"])["scorer"] for c in report["conditions"]} == {"includes", "closeness"}


def test_manifest_records_sources_and_importing_twice_writes_nothing(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    log = inspect_logs["before"]
    first = _import(prove, str(log))
    again = prove("import", "inspect", str(log))
    assert again.returncode == 0 and again.stderr == ""
    assert again.stdout == f'already imported: these logs are run "{first["name"]}"; nothing written\n'
    runs = [p for p in (workdir / "prove-runs").iterdir() if p.is_dir()]
    assert len(runs) == 1
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    (source,) = manifest["import"]["files"]
    assert source["sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    assert Path(source["path"]) == log.resolve()
    assert manifest["status"] == "complete"
    assert manifest["counts"] == {"planned": 30, "done": 30, "errored": 0}
    raw = json.loads(log.read_text())
    metrics = {s["name"]: sorted(s["metrics"]) for s in raw["results"]["scores"]}
    assert {
        k: manifest["source"][k] for k in ("tool", "task", "model", "task_args", "scorers", "metrics")
    } == {
        "tool": "inspect",
        "task": raw["eval"]["task"],
        "model": raw["eval"]["model"],
        "task_args": raw["eval"]["task_args"],
        "scorers": ["includes"],
        "metrics": {"includes": metrics["includes"]},
    }
    assert manifest["source"]["logs"][0]["status"] == "success"


def test_errored_samples_are_errors_and_t_from_tokens(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    result = _import(prove, str(inspect_logs["errors"]), "--t", "tokens")
    assert result["errored"] == 3 and result["status"] == "complete"
    table = stored_rows(_run(workdir, result))
    errored = [r for r in table if r["outcome"] is None]
    assert {r["case_id"] for r in errored} == {"q7"}
    assert all(
        r["error_kind"] == "sample_error" and "tool sandbox went away" in r["error_message"] for r in errored
    )
    assert all(r["t"] > 12 for r in table if r["outcome"] is not None)  # 12 input tokens + output
    shown = prove("inspect", "latest", "--plain")
    assert shown.returncode == 0 and "tool sandbox went away" in shown.stdout


def test_map_overrides_the_outcome_and_declares_what_it_names(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    wrong = _import(prove, str(inspect_logs["before"]), "--map", "I=wrong")
    manifest = _manifest(workdir, wrong)
    assert manifest["outcomes"] == ["correct", "wrong"]
    assert {r["outcome"] for r in stored_rows(_run(workdir, wrong))} == {"correct", "wrong"}
    # P is never given by includes(): declared only because --map names it
    partial = _import(prove, str(inspect_logs["before"]), "--map", "P=partial")
    assert _manifest(workdir, partial)["outcomes"] == ["correct", "incorrect", "partial"]


def test_truncated_and_foreign_files_are_one_clear_error(
    prove: CLI, workdir: Path, tmp_path: Path, inspect_logs: dict[str, Path]
) -> None:
    eval_log = inspect_logs["after"]
    truncated = tmp_path / eval_log.name
    truncated.write_bytes(eval_log.read_bytes()[: eval_log.stat().st_size // 2])
    result = prove("import", "inspect", str(truncated))
    assert_clean_error(result, 1, str(truncated), "not a readable Inspect AI log", "not a zip archive")
    # refused before Inspect is imported (~2 s): the command's own import log names none of it
    timed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "poisson_prove", "import", "inspect", str(truncated)],
        cwd=workdir, env=isolated_env(prove.home), capture_output=True, text=True, timeout=120,
    )
    assert timed.returncode == 1 and "not a zip archive" in timed.stderr
    assert "inspect_ai" not in timed.stderr and "import time:" in timed.stderr
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"hello": 1}')
    refused = prove("import", "inspect", str(foreign))
    assert_clean_error(refused, 1, "not a readable Inspect AI log")
    _only_error_lines(refused)  # the reader's many-line ValidationError is one line
    assert_clean_error(prove("import", "inspect", str(tmp_path / "missing.eval")), 1, "does not exist")
    assert_clean_error(
        prove("import", "inspect", str(inspect_logs["before"]), "--map", "nonsense"), 2, "VALUE=OUTCOME"
    )
    assert_clean_error(
        prove("import", "inspect", str(inspect_logs["before"]), "--scorer", "f1"), 2, 'no scorer "f1"'
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


def test_a_change_of_model_still_pairs(prove: CLI, workdir: Path, inspect_logs: dict[str, Path]) -> None:
    before = _import(prove, str(inspect_logs["before"]))
    after = _import(prove, str(inspect_logs["other_model"]))
    assert after["paired_with"] == before["name"]
    sources = [_manifest(workdir, d)["source"]["model"] for d in (before, after)]
    assert sources == ["mockllm/model", "mockllm/other"]  # what differs, for the comparison to say
    logged = [inspect_scores(inspect_logs[k]) for k in ("before", "other_model")]
    assert stored_pairs(_run(workdir, before), _run(workdir, after), {"incorrect"}) == per_case(
        *logged, failed={"I"}
    )
    both = _import(prove, str(inspect_logs["after"]), str(inspect_logs["other_model"]))
    assert both["groups"] == 2  # one import, two models: the model is an axis
    assert "model" in _manifest(workdir, both)["axis_order"]


@pytest.mark.parametrize("t", ["none", "messages"])
def test_t_sets_the_time_unit(prove: CLI, workdir: Path, inspect_logs: dict[str, Path], t: str) -> None:
    document = _import(prove, str(inspect_logs["after"]), "--t", t)
    manifest = _manifest(workdir, document)
    assert manifest["t_unit"] == {"none": "sample", "messages": "messages"}[t]
    times = {r["t"] for r in stored_rows(_run(workdir, document))}
    assert times == {1.0} if t == "none" else min(times) >= 2.0


def test_next_lines_on_imported_runs_speak_of_imports(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    assert prove("import", "inspect", str(inspect_logs["before"]), "--name", "before").returncode == 0
    alone = prove("diff")
    assert_clean_error(alone, 1, 'holds 1 run ("before"); a comparison needs two')
    assert "next: poisson-prove import inspect|lm-eval LOGS" in alone.stderr
    assert "sweep" not in alone.stderr
    assert prove("import", "inspect", str(inspect_logs["cancelled"]), "--name", "cancelled").returncode == 0
    compared = prove("diff", "before", "cancelled", "--json")
    assert compared.returncode == 0, compared.stderr
    warnings = "\n".join(json.loads(compared.stdout)["warnings"])
    assert 'run "cancelled" is partial' in warnings
    assert "finish the eval (inspect eval-retry LOG) and import it again" in warnings
    assert "resume its sweep" not in warnings


def test_epochs_that_answer_alike_are_counted_by_sample_not_by_epoch(
    prove: CLI, workdir: Path, inspect_logs: dict[str, Path]
) -> None:
    """The issue's example: a model answering every epoch of a sample alike, the change fixing
    3 samples of 10. Counting (sample, epoch) pairs as independent, McNemar says p 0.004
    ("safer"); the evidence is 3 samples, and the pooled row says what 3 samples can say."""
    _import(prove, str(inspect_logs["alike_before"]))
    _import(prove, str(inspect_logs["alike_after"]))
    before, after = inspect_scores(inspect_logs["alike_before"]), inspect_scores(inspect_logs["alike_after"])
    b, c, _ = mcnemar_exact(before, after, failed={"I"})
    assert (b, c) == (9, 0)  # 3 samples x 3 epochs fixed, none broken
    assert mcnemar(b, c).p_exact < 0.005  # what the pairs counted as independent claimed
    result = prove("diff", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["pooled_test"] == "sign_flip"
    (group,) = report["conditions"]
    (row,) = [r for r in group["outcomes"] if r["outcome"] == "incorrect"]
    assert (row["b"], row["c"], row["cases_down"], row["cases_up"]) == (9, 0, 3, 0)
    assert row["p_exact"] == pytest.approx(0.25) and row["p"] == pytest.approx(0.125)
    assert row["verdict"] == "no change" and row["within_case_correlation"] == pytest.approx(1.0)
    assert report["headline"]["word"] == "no change"
    text = prove("diff", "--plain")
    assert text.returncode == 0
    assert text.stdout.splitlines()[0].startswith("no change incorrect: 0 safer, 0 worse")
