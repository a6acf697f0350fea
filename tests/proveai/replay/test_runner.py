"""replay/runner.py: the `proveai run` loop as a library call, in this process, on three traces
captured for real against the fake model server. Everything refusable is refused before any
model call and before anything is written; the run folder holds what the result says; traces
keep their selection order whatever order they finish in; the exit code follows the verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proveai.errors import ProveAIError, ProveAIExit
from proveai.providers import reset_providers
from proveai.replay.runner import RunRequest, execute_run
from proveai.store import Store
from tests.proveai.cli.run_kit import replay_store  # noqa: F401  (the `store` fixture)
from tests.proveai.model_server import ModelServer

EDGES = ["root→classify", "classify→lookup", "lookup→draft", "draft→qa_check"]


@pytest.fixture(autouse=True)
def _in_the_project(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where a user runs `proveai run`: override and report paths are relative to it."""
    monkeypatch.chdir(workdir)


def request(workdir: Path, **fields: object) -> RunRequest:
    return RunRequest(store=Store(workdir), traces_dir=workdir / "proveai" / "traces", **fields)  # type: ignore[arg-type]


def test_an_unchanged_replay_writes_the_run_folder_the_result_describes(workdir: Path, store) -> None:
    seen: list[tuple[int, int, str]] = []
    result = execute_run(
        request(workdir, argv=("run",)), progress=lambda done, total, tid: seen.append((done, total, tid))
    )
    assert result.exit_code == ProveAIExit.OK and result.metrics.regressed == 0
    run_dir = workdir / "proveai" / "runs" / result.run.run_id
    assert result.run.path == run_dir
    assert sorted(p.name for p in run_dir.iterdir()) == ["manifest.json", "metrics.json", "verdicts.json"]
    assert result.report_paths == (run_dir / "report.html",)  # written by the caller, not here

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest == dict(result.run.manifest)
    trace_ids = [trace.trace_id for trace, _ in result.pairs]
    assert manifest["trace_ids"] == trace_ids and len(trace_ids) == 3
    assert (manifest["schema"], manifest["exit_code"], manifest["argv"]) == ("proveai.run/1", 0, ["run"])
    assert manifest["by_status"] == {"unchanged": 12}
    assert json.loads((run_dir / "metrics.json").read_text()) == result.metrics.to_dict()
    verdicts = json.loads((run_dir / "verdicts.json").read_text())
    assert [entry["trace_id"] for entry in verdicts] == trace_ids
    assert [v["edge"] for v in verdicts[0]["verdicts"]] == EDGES
    assert [tid for tid, _ in result.verdicts] == [tid for tid in trace_ids for _ in EDGES]

    assert seen[0] == (0, 3, "")  # announced before the first replay
    assert [done for done, _, _ in seen[1:]] == [1, 2, 3]
    assert {tid for _, _, tid in seen[1:]} == set(trace_ids)


def test_one_thread_or_four_the_pairs_keep_the_selections_order(workdir: Path, store) -> None:
    one = execute_run(request(workdir, jobs=1))
    four = execute_run(request(workdir, jobs=4))
    assert [t.trace_id for t, _ in one.pairs] == [t.trace_id for t, _ in four.pairs]
    graded = [[(tid, v.edge, v.status) for tid, v in result.verdicts] for result in (one, four)]
    assert graded[0] == graded[1]
    assert one.run.run_id != four.run.run_id


def test_a_regression_is_exit_1_and_counted_per_edge(workdir: Path, store, model_server: ModelServer) -> None:
    model_server.judge_verdict, model_server.judge_rationale = "worse", "lost the refund policy"
    result = execute_run(request(workdir, override_files={"qa_check": "prompts/qa_v2.md"}))
    assert result.exit_code == ProveAIExit.REGRESSION and result.metrics.regressed == 3
    assert result.metrics.by_edge["draft→qa_check"] == {"regressed": 3}
    rates = {edge: (1.0 if edge == "draft→qa_check" else 0.0) for edge in EDGES}
    assert result.metrics.regression_rate_by_edge == rates
    overrides = result.run.manifest["overrides"]["qa_check"]
    assert overrides["prompt_sha256"] and "prompt" not in overrides  # hashed, not copied


def test_strict_judge_makes_an_unjudged_change_exit_3(
    workdir: Path, store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "gpt-*")  # the judge's model routes nowhere
    reset_providers()
    lenient = execute_run(request(workdir, override_files={"qa_check": "prompts/qa_v2.md"}))
    assert lenient.exit_code == ProveAIExit.OK and lenient.metrics.unjudged == 3
    assert lenient.metrics.by_status.get("inconclusive") == 3
    strict = execute_run(request(workdir, override_files={"qa_check": "prompts/qa_v2.md"}, strict_judge=True))
    assert strict.exit_code == ProveAIExit.INCONCLUSIVE
    assert strict.run.manifest["exit_code"] == ProveAIExit.INCONCLUSIVE


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"override_files": {"qa_chek": "prompts/qa_v2.md"}}, "--override names unknown agent 'qa_chek'"),
        ({"counterfactual": ("nobody",)}, "known agents: classify, draft, lookup, qa_check"),
        ({"hold_at": ("0123456789abcdef",)}, "0123456789abcdef"),
        ({"propagate": True}, "--propagate only applies with --counterfactual or --hold-at"),
        ({"filters": {"outcome": "bad"}}, "match outcome=bad"),
        ({"baseline": "goods", "filters": {"outcome": "good"}}, "--baseline and --filter cannot be combined"),
        ({"embedder": "bert"}, "--embedder must be one of none, local, openai, not 'bert'"),
        ({"report": Path("prompts")}, "--report prompts: is a folder"),
        ({"report": Path("prompts/qa_v2.md/r.html")}, "prompts/qa_v2.md is a file, not a folder"),
    ],
)
def test_what_is_refused_is_refused_before_any_model_call_or_write(
    workdir: Path, store, model_server: ModelServer, fields: dict, message: str
) -> None:
    served = model_server.count()
    with pytest.raises(ProveAIError) as refused:
        execute_run(request(workdir, **fields))
    assert message in refused.value.message
    assert model_server.count() == served
    assert not (workdir / "proveai" / "runs").exists()


def test_an_empty_or_missing_trace_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProveAIError, match="no trace store at") as missing:
        execute_run(RunRequest(store=Store(tmp_path), traces_dir=tmp_path / "nowhere"))
    assert missing.value.suggestions
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProveAIError, match="no traces in") as empty:
        execute_run(RunRequest(store=Store(tmp_path), traces_dir=tmp_path / "empty"))
    assert empty.value.suggestions == ("proveai status  (what the store holds)",)
