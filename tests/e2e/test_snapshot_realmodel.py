"""The snapshot gate against a model server that answers like a small real model: a judge
that rambles or answers nonsense, free text that varies when sampled, a model that goes
down mid-run. The gate never turns any of these into a silent pass or a false regression."""

from __future__ import annotations

import random
import socket
from pathlib import Path

from tests.conftest import assert_clean_error
from tests.proveai.model_server import JUDGE_MARKER, ModelServer
from tests.proveai.snapshot.kit import edit, pinned_project, table_rows, verdicts_of

FAST_RETRIES = {"PROVEAI_PROVIDER_MAX_RETRIES": "1", "PROVEAI_PROVIDER_BACKOFF": "0"}


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def judge_requests(server: ModelServer) -> list:
    return [r for r in server.chat_requests() if JUDGE_MARKER in r.system]


def test_model_outage_is_an_error_about_the_model(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    port = closed_port()
    down = {**env, **FAST_RETRIES, "PROVEAI_NO_CACHE": "1",
            "PROVEAI_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    result = cli("snapshot", "verify", env=down)
    assert_clean_error(result, 2, "unreachable", f"127.0.0.1:{port}", "not a regression")
    assert "regressed" not in result.stdout and "direct edit" not in result.stdout


def test_rambling_judge_is_unfit_bounded_and_loud(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "You are rude. Do not help.")
    server.judge_style = "ramble"
    before = len(judge_requests(server))
    loose = cli("snapshot", "verify", "--judge-max-tokens", "64", env=env)
    assert loose.returncode == 0, (loose.stdout, loose.stderr)
    rows = table_rows(loose.stdout)
    assert "inconclusive" in rows["draft"] and "2 change(s) NOT checked" in loose.stdout
    assert "did NOT check" in loose.stderr
    assert "failed its known-pair check" in loose.stderr and "--judge-model" in loose.stderr
    assert "set PROVEAI_JUDGE_MODEL" not in loose.stderr
    assert "judge unfit" in verdicts_of(project, loose.stdout)["draft"]["rationale"]
    sent = judge_requests(server)[before:]
    # the first known pair, asked once and retried once; then the judge is not asked again
    assert len(sent) == 2, len(sent)
    assert all(r.body.get("max_tokens") == 64 for r in sent)
    assert "judge: 2 live call(s), 2 malformed" in loose.stderr
    strict = cli("snapshot", "verify", "--strict-judge", env=env)
    assert strict.returncode == 3, (strict.stdout, strict.stderr)
    default_tokens = {r.body.get("max_tokens") for r in judge_requests(server)[before + 2 :]}
    assert default_tokens == {200}


def test_nonsense_judge_never_decides(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "You are rude. Do not help.")
    server.judge_style = "nonsense"
    server.judge_verdict = "equivalent"  # would pass the rude prompt as drifted
    result = cli("snapshot", "verify", env=env)
    assert result.returncode == 0, (result.stdout, result.stderr)
    verdicts = verdicts_of(project, result.stdout)
    assert verdicts["draft"]["status"] == "inconclusive"
    assert "expected 'worse'" in verdicts["draft"]["rationale"]
    assert cli("snapshot", "verify", "--strict-judge", env=env).returncode == 3


def test_fit_judge_still_decides(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "You are rude. Do not help.")
    result = cli("snapshot", "verify", env=env)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert verdicts_of(project, result.stdout)["draft"]["status"] == "regressed"


def sampled(project: Path) -> None:
    edit(project / "pipeline.py", "return dispatch(MODEL).call(messages, MODEL, **kwargs).text",
         "return dispatch(MODEL).call(messages, MODEL, temperature=0.8, **kwargs).text")


def test_unchanged_code_at_temperature_is_not_a_regression(
    project: Path, server: ModelServer, home: Path
) -> None:
    sampled(project)
    from tests.proveai.snapshot.kit import git

    git(project, "commit", "-qam", "sampled")
    rng = random.Random(3)
    # free text that varies with each sample, numbers included (a small model at T=0.8)
    server.reply_fn = lambda r: None if JUDGE_MARKER in r.system else f"Ticket {rng.randint(10, 99)} noted."
    cli, env = pinned_project(project, server, home)
    from tests.conftest import isolated_env
    from tests.proveai.snapshot.kit import run_pipeline

    assert run_pipeline(project, isolated_env(home, {**env, "PROVEAI_NO_CACHE": "1"})).returncode == 0
    again = cli("snapshot", "init", env=env)
    assert again.returncode == 0, again.stderr
    assert "classify" in again.stderr and "different outputs for the same input" in again.stderr
    assert "next: proveai snapshot init latest --replicates 10" in again.stderr
    result = cli("snapshot", "verify", env={**env, "PROVEAI_NO_CACHE": "1"})
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "regressed" not in result.stdout
    verdicts = verdicts_of(project, result.stdout)
    assert verdicts["classify"]["status"] == "inconclusive"
    assert verdicts["classify"]["rationale"].startswith("outputs vary")
    assert verdicts["classify"]["change"] is None  # nothing was edited
    assert "vary from run to run" in result.stderr and "--replicates" in result.stderr


def _varying_replies(server: ModelServer) -> None:
    rng = random.Random(5)
    # free text that varies with each call, numbers included, as SmolLM2 served by llama.cpp answers
    server.reply_fn = lambda r: None if JUDGE_MARKER in r.system else f"Order {rng.randint(10, 99)}: noted."


def test_unchanged_code_at_the_providers_default_temperature_is_not_a_regression(
    project: Path, server: ModelServer, home: Path
) -> None:
    """The pipeline's calls name no temperature, so the provider samples at its default (above 0
    for OpenAI-compatible servers): a different output of an unchanged agent is the model's own
    variation, never a regression (a real SmolLM2 run once failed the gate here on tier 1's
    "numbers changed" for unchanged code)."""
    _varying_replies(server)
    cli, env = pinned_project(project, server, home)
    result = cli("snapshot", "verify", env={**env, "PROVEAI_NO_CACHE": "1"})
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "regressed" not in result.stdout and "direct edit" not in result.stdout
    verdicts = verdicts_of(project, result.stdout)
    for agent in ("classify", "draft", "qa_check"):
        assert verdicts[agent]["status"] == "inconclusive", verdicts[agent]
        assert verdicts[agent]["rationale"].startswith(
            "outputs vary: sampled at the provider's default temperature"
        ), verdicts[agent]
        assert verdicts[agent]["change"] is None
    assert "vary from run to run" in result.stderr


def test_a_greedy_call_whose_output_changed_is_still_graded(
    project: Path, server: ModelServer, home: Path
) -> None:
    """temperature=0 asks for the same output every time: a different one is graded (here the
    judge calls it worse), not put down to sampling."""
    edit(project / "pipeline.py", "return dispatch(MODEL).call(messages, MODEL, **kwargs).text",
         "return dispatch(MODEL).call(messages, MODEL, temperature=0, **kwargs).text")
    from tests.proveai.snapshot.kit import git

    git(project, "commit", "-qam", "greedy")
    _varying_replies(server)
    server.judge_verdict = "worse"
    cli, env = pinned_project(project, server, home)
    result = cli("snapshot", "verify", env={**env, "PROVEAI_NO_CACHE": "1"})
    assert result.returncode == 1, (result.stdout, result.stderr)
    verdicts = verdicts_of(project, result.stdout)
    assert verdicts["classify"]["status"] == "regressed", verdicts["classify"]
    assert not verdicts["classify"]["rationale"].startswith("outputs vary")


def test_code_edits_are_direct_edits(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    pipeline = project / "pipeline.py"
    edit(pipeline, "return ask(CLASSIFY_PROMPT, ticket)", "return ask(CLASSIFY_PROMPT, ticket.upper())")
    result = cli("snapshot", "verify", env=env)
    verdicts = verdicts_of(project, result.stdout)
    assert verdicts["classify"]["change"] == "direct edit", verdicts
    assert verdicts["draft"]["change"] == "downstream"
    edit(project / "pipeline.py", "ticket.upper()", "ticket")
    edit(pipeline, "return ask(DRAFT_PROMPT, category)", "return ask(DRAFT_PROMPT, category + '!')")
    second = verdicts_of(project, cli("snapshot", "verify", env=env).stdout)
    assert second["classify"]["status"] == "unchanged"
    assert second["draft"]["change"] == "direct edit", second
    assert second["qa_check"]["change"] == "downstream"


def test_hand_edited_invocation_is_refused_not_run(project: Path, server: ModelServer, home: Path) -> None:
    import json

    cli, env = pinned_project(project, server, home)
    path = project / "proveai" / "snapshots" / "latest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    (project / "evil.py").write_text("open('ran.txt', 'w').write('ran')\n", encoding="utf-8")
    data["invocation"]["argv"] = ["evil.py"]
    path.write_text(json.dumps(data), encoding="utf-8")
    result = cli("snapshot", "verify", "latest", env=env)
    assert_clean_error(result, 2, "python evil.py", "edited by hand", "will not run it")
    assert not (project / "ran.txt").exists()


def test_step_summary_escapes_judge_text(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "You are rude. Do not help.")
    server.judge_rationale = "<img src=x onerror=alert(1)> | [click](http://evil.example)"
    summary = project.parent / "summary.md"
    result = cli("snapshot", "verify", env={**env, "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1, (result.stdout, result.stderr)
    text = summary.read_text(encoding="utf-8")
    assert "<img" not in text and "[click]" not in text
    row = next(line for line in text.splitlines() if line.startswith("| draft "))
    assert row.count("|") == 5 and "&#60;img src=x" in row


CHROMIUM = Path("/usr/bin/chromium")


def test_inconclusive_is_visible_in_the_verify_report(project: Path, server: ModelServer, home: Path) -> None:
    import pytest

    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed")
    from playwright.sync_api import sync_playwright

    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "You are rude. Do not help.")
    server.judge_style = "nonsense"
    result = cli("snapshot", "verify", env=env)
    run_id = next(w for w in result.stdout.split() if w.startswith("verify-"))
    report = project / "proveai" / "runs" / run_id / "report.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(report.as_uri())
            badge = page.locator(".card .s-inconclusive").first
            assert badge.inner_text() == "inconclusive"
            # a coloured badge with white text, never white on white
            colors = badge.evaluate(
                "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]"
            )
            assert colors[0] == "rgb(255, 255, 255)" and colors[1] not in ("rgba(0, 0, 0, 0)", colors[0])
            card = page.locator(".card", has=page.locator(".s-inconclusive")).first
            assert card.locator("b").inner_text() == "2"  # draft and qa_check
        finally:
            browser.close()


def test_quick_after_update_grades_against_the_new_pin(
    project: Path, server: ModelServer, home: Path
) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a warm reply")
    server.judge_verdict = "better"
    assert cli("snapshot", "verify", env=env).returncode == 0
    updated = cli("snapshot", "update", env=env)
    assert updated.returncode == 0 and "v1 → v2" in updated.stdout
    # the store holds only the trace captured before the new pin (old prompt): not newer
    quick = cli("snapshot", "verify", "--quick", env=env)
    assert quick.returncode == 0, (quick.stdout, quick.stderr)
    assert "drifted" not in quick.stdout and "direct edit" not in quick.stdout
    assert "checked the pinned fixture's integrity only" in quick.stdout
