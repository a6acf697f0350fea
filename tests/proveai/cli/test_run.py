"""`proveai run`, run for real as a console script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CLI, assert_clean_error
from tests.proveai.cli.run_kit import (
    _files,
    _run_dir,
    replay_store,  # noqa: F401  (the `store` fixture)
)
from tests.proveai.model_server import ModelServer


def test_unchanged_replay_exits_0_with_the_summary_table(proveai_cli: CLI, workdir: Path, store) -> None:
    before = _files(workdir)
    result = proveai_cli("run", env=store)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "3 trace(s) → proveai/runs/" in lines[0]
    assert max(len(line) for line in lines[: lines.index("")]) <= 80
    assert lines[1].startswith("┏") and "Trace" in lines[2] and "Rationale" in lines[2]
    assert "Per-edge totals:" in lines
    assert "  draft→qa_check: 3 unchanged" in lines and "  root→classify: 3 unchanged" in lines
    assert lines[-1] == "no edge regressed: exit 0"
    run_dir = _run_dir(workdir)
    assert f"report: {run_dir.relative_to(workdir)}/report.html" in lines
    assert "\x1b[" not in result.stdout
    assert result.stderr.count("replayed ") == 3
    run_dir = _run_dir(workdir)
    new_files = _files(workdir) - before
    assert all(f.startswith(str(run_dir.relative_to(workdir))) for f in new_files), new_files
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert (
        manifest["run_id"] == run_dir.name and manifest["exit_code"] == 0 and len(manifest["trace_ids"]) == 3
    )
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["by_status"] == {"unchanged": 12} and metrics["traces"] == 3
    verdicts = json.loads((run_dir / "verdicts.json").read_text())
    assert [v["edge"] for v in verdicts[0]["verdicts"]] == [
        "root→classify",
        "classify→lookup",
        "lookup→draft",
        "draft→qa_check",
    ]
    assert (run_dir / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_a_regressing_override_exits_1_and_writes_the_report_where_asked(
    proveai_cli: CLI, workdir: Path, store, model_server: ModelServer
) -> None:
    model_server.judge_verdict, model_server.judge_rationale = "worse", "lost the refund policy"
    result = proveai_cli(
        "run",
        "--override",
        "qa_check=prompts/qa_v2.md",
        "--report",
        "out/report.html",
        "--no-color",
        env=store,
    )
    assert result.returncode == 1, result.stderr
    assert "3 trace(s) → out/report.html" in result.stdout
    assert "  draft→qa_check: 3 regressed" in result.stdout
    row = next(line for line in result.stdout.splitlines() if "draft→qa_check" in line)
    rationale = row.split("│")[-2].strip()  # cut with "…" to fit the 80-column table
    assert len(row) <= 80 and rationale.endswith("…") and len(rationale) > len("judge: …")
    assert "judge: lost the refund policy".startswith(rationale[:-1])
    assert result.stdout.rstrip().endswith("3 edge(s) regressed: exit 1")
    assert (workdir / "out" / "report.html").exists()
    run_dir = _run_dir(workdir)
    assert f"report: {run_dir.relative_to(workdir)}/report.html and out/report.html" in result.stdout
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["overrides"]["qa_check"]["prompt_sha256"]
    assert "Be strict" not in (run_dir / "manifest.json").read_text()  # the prompt is hashed, not copied
    verdicts = json.loads((run_dir / "verdicts.json").read_text())
    qa = verdicts[0]["verdicts"][-1]
    assert (qa["status"], qa["tier"], qa["change"]) == ("regressed", 3, "direct edit")
    # a second identical run costs no model call
    served = model_server.count()
    again = proveai_cli("run", "--override", "qa_check=prompts/qa_v2.md", env=store)
    assert again.returncode == 1 and model_server.count() == served
    assert "0 live" in again.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--override", "qa_chek=prompts/qa_v2.md"], "unknown agent 'qa_chek' (did you mean \"qa_check\"?)"),
        (["--counterfactual", "nobody"], "known agents: classify, draft, lookup, qa_check"),
        (
            ["--override", "qa_check=prompts/missing.md"],
            "--override qa_check=prompts/missing.md: no such file",
        ),
        (["--override", "qa_check"], "--override expects AGENT=PATH"),
        (["--hold-at", "0123456789abcdef"], "0123456789abcdef"),
        (["--propagate"], "--propagate only applies with --counterfactual or --hold-at"),
        (["--filter", "outcome=great"], "outcome must be one of"),
        (["--filter", "outcome=bad"], "no traces in proveai/traces match outcome=bad"),
        (["--baseline", "nope"], "no baseline named 'nope'"),
        (["--experiment", "nope"], "no experiment named 'nope'"),
        (["--traces", "elsewhere"], "no trace store at elsewhere"),
        (["--jobs", "0"], "--jobs must be a whole number from 1 to 64"),
        (["--report", "."], "--report .: is a folder; give the report file's path"),
        (["--report", "prompts"], "--report prompts: is a folder"),
        (["--report", "prompts/qa_v2.md/r.html"], "prompts/qa_v2.md is a file, not a folder"),
    ],
)
def test_bad_input_is_exit_2_and_writes_nothing(
    proveai_cli: CLI, workdir: Path, store, args, fragment
) -> None:
    result = proveai_cli("run", *args, env=store)
    assert_clean_error(result, 2, fragment)
    assert not (workdir / "proveai" / "runs").exists()


def test_missing_credentials_fail_cleanly_naming_the_variable(proveai_cli: CLI, workdir: Path, store) -> None:
    result = proveai_cli("run", env={"PROVEAI_PROVIDER_PATTERN": ""})
    assert_clean_error(result, 2, "OPENAI_API_KEY", "gpt-4o-mini")
    assert not (workdir / "proveai" / "runs").exists()


def test_embedder_choice_is_validated(proveai_cli: CLI, store) -> None:
    result = proveai_cli("run", "--embedder", "bert", env=store)
    assert result.returncode == 2 and "invalid choice: 'bert'" in result.stderr


def test_hold_at_and_counterfactual(proveai_cli: CLI, workdir: Path, store) -> None:
    trace_file = next(p for p in (workdir / "proveai" / "traces").glob("*.json") if len(p.stem) == 32)
    spans = json.loads(trace_file.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]

    def agent(span: dict) -> str:
        attrs = {a["key"]: a["value"] for a in span["attributes"]}
        return attrs["gen_ai.agent.name"]["stringValue"]

    span_id = next(s["spanId"] for s in spans if agent(s) == "draft")
    result = proveai_cli("run", "--hold-at", span_id, "--override", "draft=prompts/qa_v2.md", env=store)
    assert result.returncode in (0, 1), result.stderr
    assert "1 trace(s)" in result.stdout
    run_dir = _run_dir(workdir)
    replayed = json.loads((run_dir / "verdicts.json").read_text())[0]["replayed_spans"]
    assert [r["live"] for r in replayed].count(True) == 1
    counter = proveai_cli("run", "--counterfactual", "classify", env=store)
    assert counter.returncode == 0, counter.stderr


def test_openai_embedder_tier(proveai_cli: CLI, store, model_server: ModelServer) -> None:
    env = {**store, "PROVEAI_EMBEDDER_BASE_URL": model_server.openai_url, "PROVEAI_EMBEDDER_MODEL": "emb"}
    result = proveai_cli("run", "--override", "draft=prompts/qa_v2.md", "--embedder", "openai", env=env)
    assert result.returncode in (0, 1), result.stderr
    assert model_server.count("/v1/embeddings") >= 1


def test_unjudged_changes_warn_and_strict_judge_exits_3(proveai_cli: CLI, store, workdir: Path) -> None:
    # the judge model routes nowhere: the changed edges cannot be judged
    env = {**store, "PROVEAI_PROVIDER_PATTERN": "gpt-*"}
    result = proveai_cli("run", "--override", "qa_check=prompts/qa_v2.md", env=env)
    assert result.returncode == 0, result.stderr
    assert (
        "warning: 3 changed edge(s) were not judged (judge skip: ANTHROPIC_API_KEY not set)" in result.stderr
    )
    run_dir = _run_dir(workdir)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["by_status"]["inconclusive"] == 3 and "drifted" not in metrics["by_status"]
    assert metrics["unjudged"] == 3
    report = (run_dir / "report.html").read_text(encoding="utf-8")
    assert '<div class="card"><b>3</b><span class="status s-inconclusive">inconclusive</span></div>' in report
    assert result.stdout.count("inconclusive") >= 3  # the summary table's verdict column
    strict = proveai_cli("run", "--override", "qa_check=prompts/qa_v2.md", "--strict-judge", env=env)
    assert strict.returncode == 3
    assert strict.stdout.rstrip().endswith("3 changed edge(s) could not be judged (--strict-judge): exit 3")
    via_env = proveai_cli(
        "run", "--override", "qa_check=prompts/qa_v2.md", env={**env, "PROVEAI_STRICT_JUDGE": "1"}
    )
    assert via_env.returncode == 3
    assert "next: set PROVEAI_JUDGE_MODEL" in result.stderr  # no key: setting the model is the fix




def test_agents_without_a_captured_request_are_held_and_the_run_says_so(
    proveai_cli: CLI, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proveai import FileExporter, monitor, trace

    @monitor("classify", model="gpt-4o-mini")
    def classify(ticket: str) -> str:
        return "billing"

    @monitor("qa_check", parent_agent="classify", model="claude-haiku-4-5")
    def qa_check(reply: str) -> str:
        return f"QA ok: {reply}"

    with trace("svc", exporters=[FileExporter(workdir / "proveai" / "traces")]):
        qa_check(classify("My order arrived broken"))
    result = proveai_cli("run")
    assert result.returncode == 0, result.stderr
    assert "not re-executed (n…" in result.stdout
    assert "note: no span was re-executed" in result.stderr
    (workdir / "qa.md").write_text("Be strict", encoding="utf-8")
    # an override builds a request from the inputs; with no key the run stops before writing anything
    runs_before = sorted((workdir / "proveai" / "runs").iterdir())
    refused = proveai_cli("run", "--override", "qa_check=qa.md")
    assert_clean_error(refused, 2, "model 'claude-haiku-4-5'", "ANTHROPIC_API_KEY")
    assert sorted((workdir / "proveai" / "runs").iterdir()) == runs_before


def test_judge_model_and_no_cache_flags(
    proveai_cli: CLI, workdir: Path, store, model_server: ModelServer
) -> None:
    args = ("run", "--override", "qa_check=prompts/qa_v2.md", "--judge-model", "gpt-judge", "--no-cache")
    captured = model_server.count()
    first = proveai_cli(*args, env=store)
    assert first.returncode == 0, first.stderr
    judged = [r for r in model_server.chat_requests() if r.body["model"] == "gpt-judge"]
    assert len(judged) == 3  # one judgement per changed qa_check edge, on the model asked for
    assert "judge: gpt-judge" in first.stdout and "0 from cache" in first.stdout
    per_run = model_server.count() - captured
    assert per_run == 3 + 3 + 3 + 3  # classify, draft, qa_check re-sent, plus the judge, per trace
    again = proveai_cli(*args, env=store)
    assert again.returncode == 0 and model_server.count() == captured + 2 * per_run  # none from disk
    runs = (workdir / "proveai" / "runs").iterdir()
    manifests = [json.loads((d / "manifest.json").read_text()) for d in runs]
    assert {m["judge_model"] for m in manifests} == {"gpt-judge"}
    assert all(m["cache"]["enabled"] is False for m in manifests)
    assert not (workdir.parent / "cache").exists()  # --no-cache writes no cache entry either


def test_the_quick_start_replay_commands_as_written(
    proveai_cli: CLI, workdir: Path, store, model_server: ModelServer
) -> None:
    from proveai import FileExporter, trace
    from proveai.capture.checks import regex_match
    from tests.proveai.replay import pipeline

    with trace("ticket-triage", exporters=[FileExporter(workdir / "proveai" / "traces")],
               checks=[regex_match("qa_check", r"\[\d+\]")]) as failing:  # no citation: flagged
        category = pipeline.classify("The reviewer missed a wrong refund")
        pipeline.qa_check(pipeline.draft(category, pipeline.lookup(category)))
    (workdir / "prompts" / "qa_check_v2.md").write_text("Check the reply; cite sources.", encoding="utf-8")
    model_server.judge_verdict, model_server.judge_rationale = "worse", "lost the security context"

    status = proveai_cli("status", "--filter", "detection=flagged", "--limit", "10", env=store)
    assert status.returncode == 0 and failing.trace_id in status.stdout
    assert status.stdout.count("flagged") == 1
    created = proveai_cli(
        "baseline", "create", "reviewer-failures", "--filter", "detection=flagged", env=store
    )
    assert "'reviewer-failures' v1 — 1 trace(s)" in created.stdout
    new = proveai_cli("experiment", "new", "fix-qa-check", "--override", "qa_check=prompts/qa_check_v2.md",
                      env=store)
    assert new.returncode == 0, new.stderr
    gate = proveai_cli("run", "--baseline", "reviewer-failures", "--experiment", "fix-qa-check", env=store)
    assert gate.returncode == 1 and "  draft→qa_check: 1 regressed" in gate.stdout
    span_id = failing.span("qa_check").span_id
    one = proveai_cli(
        "run", "--hold-at", span_id, "--override", "qa_check=prompts/qa_check_v2.md", env=store
    )
    assert one.returncode == 1 and "1 trace(s)" in one.stdout
    runs = (workdir / "proveai" / "runs").iterdir()
    (run_dir,) = [d for d in runs if "--hold-at" in (d / "manifest.json").read_text()]
    verdicts = json.loads((run_dir / "verdicts.json").read_text())
    held = [s for s in verdicts[0]["replayed_spans"] if s["held"] == "selection"]
    assert len(held) == 3  # everything but the chosen span kept its recorded output
    inline = proveai_cli("run", "--filter", "outcome=good", "--override", "qa_check=prompts/qa_check_v2.md",
                         "--report", "report.html", env=store)
    assert inline.returncode == 1 and "3 trace(s) → report.html" in inline.stdout
    assert (workdir / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
