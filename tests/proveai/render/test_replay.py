"""render/replay.py: how `proveai run` reads. print_summary on a run the replay library really did
(three traces captured against the fake model server, tests/proveai/cli/run_kit.py): the 80-column
table, per-edge totals, where the artifacts are and the exit line on `out`; what was not
re-executed or judged, and what to do about it, on `err`. The replay progress, one plain line per
trace on a pipe. Then the console script, for what only a real run shows."""

from __future__ import annotations

import io
import socket
from pathlib import Path
from typing import Any

import pytest

from proveai import register_provider
from proveai.providers import reset_providers
from proveai.providers.openai import OpenAICompatibleProvider
from proveai.render.replay import TABLE_WIDTH, print_summary, replay_progress
from proveai.replay.runner import RunRequest, RunResult, execute_run
from proveai.store import Store
from tests.conftest import CLI
from tests.proveai.cli.run_kit import replay_store  # noqa: F401  (the `store` fixture)
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.store_kit import capture

EDGES = ("root→classify", "classify→lookup", "lookup→draft", "draft→qa_check")


@pytest.fixture(autouse=True)
def _in_the_project(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where a user runs `proveai run`: override paths are relative to it."""
    monkeypatch.chdir(workdir)


def run(workdir: Path, traces_dir: Path | None = None, **fields: Any) -> RunResult:
    traces = traces_dir or workdir / "proveai" / "traces"
    return execute_run(RunRequest(store=Store(workdir), traces_dir=traces, **fields))


def summary(result: RunResult) -> tuple[list[str], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    print_summary(result, out=out, err=err)
    return out.getvalue().splitlines(), err.getvalue().splitlines()


def test_an_unchanged_run_is_the_table_the_totals_and_exit_0(workdir: Path, store: dict) -> None:
    result = run(workdir)
    out, err = summary(result)
    blank = out.index("")
    table = out[:blank]
    assert max(len(line) for line in table) <= TABLE_WIDTH
    assert "3 trace(s) →" in table[0]
    header = next(line for line in table if "Trace" in line)
    cells = [cell.strip() for cell in header.strip("┃").split("┃")]
    assert cells == ["Trace", "Edge", "Verdict", "Rationale"]
    rows = [line for line in table if line.startswith("│")]
    assert len(rows) == 12 and all("unchanged" in line for line in rows)
    assert rows[0].split("│")[1].strip() == result.verdicts[0][0][:7] + "…"  # the trace id, cut
    assert out[blank:] == [
        "",
        "Per-edge totals:",
        *(f"  {edge}: 3 unchanged" for edge in EDGES),
        "",
        f"run artifacts: {result.run.path}/ (manifest, verdicts, metrics)",
        f"report: {result.report_paths[-1]}",
        f"model calls: {result.metrics.cache_misses} live, {result.metrics.cache_hits} from cache · "
        f"judge: {result.judge_model}",
        "no edge regressed: exit 0",
    ]
    assert err == []


def test_a_regression_says_how_many_edges_and_exit_1(
    workdir: Path, store: dict, model_server: ModelServer
) -> None:
    model_server.judge_verdict, model_server.judge_rationale = "worse", "lost the refund policy"
    result = run(workdir, override_files={"qa_check": "prompts/qa_v2.md"}, report=Path("out/r.html"))
    out, _ = summary(result)
    assert "  draft→qa_check: 3 regressed" in out and "  root→classify: 3 unchanged" in out
    assert out[-1] == "3 edge(s) regressed: exit 1"
    assert f"report: {result.report_paths[0]} and out/r.html" in out
    assert "3 trace(s) → out/r.html" in out[0]  # the --report copy is the one named on top


def test_unjudged_edges_warn_with_a_next_line_and_strict_judging_exits_3(
    workdir: Path, store: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "gpt-*")  # the judge (claude-*) routes nowhere
    reset_providers()
    out, err = summary(run(workdir, override_files={"qa_check": "prompts/qa_v2.md"}))
    assert out[-1] == "no edge regressed: exit 0"
    assert err == [
        "warning: 3 changed edge(s) were not judged (judge skip: ANTHROPIC_API_KEY not set)",
        "next: set PROVEAI_JUDGE_MODEL and its provider variables, or pass --judge-model",
    ]
    strict, _ = summary(run(workdir, override_files={"qa_check": "prompts/qa_v2.md"}, strict_judge=True))
    assert strict[-1] == "3 changed edge(s) could not be judged (--strict-judge): exit 3"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Refusing:
    """A judge provider that answers every request with an error of its own."""

    def call(self, messages: Any, model: str, **kwargs: Any) -> str:
        raise RuntimeError("quota exhausted for today")

    def supports(self, model: str) -> bool:
        return True


@pytest.mark.parametrize(
    ("judge", "hint"),
    [
        ("unreachable", "next: the judge's endpoint is unreachable: check that it is up and its base URL"),
        ("refusing", "next: check the judge model and its provider (see the reasons above), or pass "
         "--judge-model"),
    ],
)
def test_the_next_line_follows_why_the_judge_did_not_decide(
    workdir: Path, store: dict, monkeypatch: pytest.MonkeyPatch, judge: str, hint: str
) -> None:
    monkeypatch.setenv("PROVEAI_PROVIDER_MAX_RETRIES", "0")
    provider = (
        OpenAICompatibleProvider(api_key="k", base_url=f"http://127.0.0.1:{closed_port()}/v1")
        if judge == "unreachable"
        else Refusing()
    )
    register_provider("judge-*", provider)
    _, err = summary(run(workdir, override_files={"qa_check": "prompts/qa_v2.md"}, judge_model="judge-1"))
    assert err[0].startswith("warning: 3 changed edge(s) were not judged (")
    assert err[1] == hint


def test_what_was_not_re_executed_is_said_on_err(workdir: Path, store: dict) -> None:
    # lookup (a TOOL, no model call) lives in a module this project folder cannot import
    out, err = summary(run(workdir, override_files={"classify": "prompts/qa_v2.md"}))
    assert out[-1] == "no edge regressed: exit 0"
    assert len(err) == 1 and err[0].startswith(
        "warning: lookup: inputs changed upstream but it was not re-executed: module "
        "'tests.proveai.replay.pipeline' is not importable from the project root"
    )
    assert err[0].endswith("; recorded output kept")


def test_traces_without_a_captured_request_are_noted_with_what_to_do(workdir: Path, tmp_path: Path) -> None:
    plain = Store(tmp_path / "plain")
    capture(plain)  # agents that call no model through proveai
    result = run(workdir, traces_dir=plain.traces_dir)
    assert result.metrics.live_spans == 0
    _, err = summary(result)
    assert err == [
        "note: no span was re-executed: the traces hold no captured model request (agents that call "
        "their model through proveai's providers record one)",
        "next: add --override AGENT=PATH, or re-run the pipeline: proveai snapshot verify",
    ]


def test_replay_progress_on_a_pipe_is_one_line_per_replayed_trace() -> None:
    err = io.StringIO()
    progress = replay_progress(err, pretty=False, color=False)
    progress(0, 2, "")  # announced: nothing replayed yet, nothing said
    progress(1, 2, "a" * 32)
    progress(2, 2, "b" * 32)
    progress.close()
    assert err.getvalue().splitlines() == [f"replayed 1/2 {'a' * 32}", f"replayed 2/2 {'b' * 32}"]


# ---- the console script ----------------------------------------------------------------------


def test_a_rambling_judge_gets_the_right_hint(proveai_cli: CLI, store, model_server: ModelServer) -> None:
    model_server.judge_style = "ramble"  # set, reachable, but never a verdict
    result = proveai_cli("run", "--override", "qa_check=prompts/qa_v2.md", env=store)
    assert result.returncode == 0, result.stderr
    assert "malformed judge reply" in result.stderr
    assert "next: the judge answered but not with a verdict" in result.stderr
    assert "set PROVEAI_JUDGE_MODEL" not in result.stderr
    judged = [r for r in model_server.chat_requests() if "You compare two outputs" in r.system]
    assert judged and all(r.body.get("max_tokens") == 200 for r in judged)


def test_a_report_path_that_looks_like_markup_prints_as_written(
    proveai_cli: CLI, workdir: Path, store
) -> None:
    """The summary's title is data: a path like out/[/oops]/r.html is not read as Rich markup."""
    result = proveai_cli("run", "--report", "out/[/oops]/r.html", env=store)
    assert result.returncode == 0, result.stderr
    assert "3 trace(s) → out/[/oops]/r.html" in result.stdout and "Traceback" not in result.stderr
    assert (workdir / "out" / "[" / "oops]" / "r.html").exists()
