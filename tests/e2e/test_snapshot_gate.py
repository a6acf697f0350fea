"""The snapshot gate end to end: a real pipeline in a git repository, a real model server on
127.0.0.1, the installed `proveai` script in subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from proveai.store import Store
from proveai.store.runs import Run
from tests.conftest import CLI, assert_clean_error, isolated_env
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import (
    edit,
    git,
    make_project,
    pinned_project,
    run_pipeline,
    server_env,
    table_rows,
    verdicts_of,
)


def wait_dead(pid: int) -> bool:
    """True once `pid` is gone or a zombie (killed, waiting for its new parent to reap it)."""
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_init_verify_edit_update_cycle(project: Path, server: ModelServer, home: Path) -> None:
    env = server_env(server.openai_url)
    cli = CLI("proveai", project, home)
    first = run_pipeline(project, isolated_env(home, env), "My parcel is late", "--urgent")
    assert first.returncode == 0, first.stderr

    init = cli("snapshot", "init", env=env)
    assert init.returncode == 0, init.stderr
    assert init.stdout.startswith("Wrote snapshot 'latest' v1 — 3 agent(s) · trace ")
    pinned_path = project / "proveai" / "snapshots" / "latest.json"
    pinned = json.loads(pinned_path.read_text(encoding="utf-8"))
    # positional arguments are pinned as typed
    assert pinned["invocation"]["argv"] == ["pipeline.py", "My parcel is late", "--urgent"]
    assert pinned["captures"][0]["io"]["classify"][0]["inputs"] == {"ticket": "My parcel is late"}
    # the judge cache is kept out of git by a .gitignore next to it
    assert "/.judge_cache.json" in (project / "proveai" / "snapshots" / ".gitignore").read_text()

    requests_before = server.count("/v1/chat/completions")
    ok = cli("snapshot", "verify", env=env)
    assert ok.returncode == 0, (ok.stdout, ok.stderr)
    assert all("unchanged" in row for row in table_rows(ok.stdout).values())
    # verify re-ran the pipeline with the same argv: the same ticket reached the model
    fresh_requests = server.chat_requests()[requests_before:]
    assert any(m.get("content") == "My parcel is late" for r in fresh_requests for m in r.messages)
    # ...and its fresh traces went to a temporary folder, not the user's store
    stored = [p for p in (project / "proveai" / "traces").glob("*.json") if "." not in p.stem]
    assert [p.stem for p in stored if p.stem != "manifest"] == [pinned["captures"][0]["trace_id"]]
    # a second verify of unchanged code: plain dispatch(model) is answered from the response cache
    calls_before = server.count("/v1/chat/completions")
    assert cli("snapshot", "verify", env=env).returncode == 0
    assert server.count("/v1/chat/completions") == calls_before

    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
    bad = cli("snapshot", "verify", env=env)
    assert bad.returncode == 1, (bad.stdout, bad.stderr)
    verdicts = verdicts_of(project, bad.stdout)
    assert verdicts["classify"]["status"] == "unchanged"
    assert verdicts["draft"]["status"] == "regressed"
    assert verdicts["draft"]["change"] == "direct edit"
    assert "lost the polite tone" in verdicts["draft"]["rationale"]
    assert verdicts["qa_check"]["status"] == "regressed"
    assert verdicts["qa_check"]["change"] == "downstream"
    assert "direct edit" in table_rows(bad.stdout)["draft"]
    run_id = next(w for w in bad.stdout.split() if w.startswith("verify-"))
    run = Run.load(run_id, Store(project))  # the replay engine's reader of run folders
    assert run.manifest["kind"] == "snapshot-verify" and run.manifest["exit_code"] == 1
    report = (run.path / "report.html").read_text(encoding="utf-8")
    assert '<meta charset="utf-8">' in report.replace("'", '"') and "lost the polite tone" in report

    diff = cli("snapshot", "diff", "--agent", "draft", env=env)
    assert diff.returncode == 0, diff.stderr
    assert "-Draft a short, polite reply for this category." in diff.stdout
    assert "+Draft a curt reply for this category." in diff.stdout
    side = cli("snapshot", "diff", "--side-by-side", "--agent", "draft", env=env)
    assert side.returncode == 0 and "pinned" in side.stdout and "Draft a curt reply" in side.stdout

    update = cli("snapshot", "update", env=env)
    assert update.returncode == 0, update.stderr
    assert "v1 → v2" in update.stdout
    again = cli("snapshot", "verify", env=env)
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert json.loads(pinned_path.read_text(encoding="utf-8"))["version"] == 2


def test_module_invocation_and_reinit_is_byte_stable(tmp_path: Path, server: ModelServer, home: Path) -> None:
    project = tmp_path / "proj"
    make_project(project, package=True)
    env = server_env(server.openai_url)
    ran = run_pipeline(project, isolated_env(home, env), "Refund please", module=True)
    assert ran.returncode == 0, ran.stderr
    cli = CLI("proveai", project, home)
    assert cli("snapshot", "init", env=env).returncode == 0
    path = project / "proveai" / "snapshots" / "latest.json"
    first_bytes = path.read_bytes()
    assert first_bytes.endswith(b"}\n")
    invocation = json.loads(first_bytes)["invocation"]
    assert invocation["argv"][:2] == ["-m", "pkg.pipeline"] and invocation["module"] == "pkg.pipeline"

    again = cli("snapshot", "init", env=env)
    assert again.returncode == 0
    assert "already pins this" in again.stdout
    assert path.read_bytes() == first_bytes

    ok = cli("snapshot", "verify", env=env)
    assert ok.returncode == 0, (ok.stdout, ok.stderr)


def test_removed_agent_is_missing_and_fails(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(
        project / "pipeline.py",
        "            reply_check = qa_check(reply)",
        "            reply_check = reply",
    )
    result = cli("snapshot", "verify", env=env)
    assert result.returncode == 1, (result.stdout, result.stderr)
    verdicts = verdicts_of(project, result.stdout)
    assert verdicts["qa_check"]["status"] == "missing"
    assert verdicts["draft"]["status"] == "unchanged"


def test_loop_count_change_and_new_agent(project: Path, server: ModelServer, home: Path) -> None:
    env = server_env(server.openai_url)
    edit(project / "pipeline.py", "LOOPS = 1", "LOOPS = 2")
    assert run_pipeline(project, isolated_env(home, env)).returncode == 0
    cli = CLI("proveai", project, home)
    assert cli("snapshot", "init", env=env).returncode == 0
    pinned = json.loads((project / "proveai" / "snapshots" / "latest.json").read_text())
    assert len(pinned["captures"][0]["io"]["qa_check"]) == 2

    same = cli("snapshot", "verify", env=env)
    assert same.returncode == 0, same.stdout  # both iterations matched one by one
    edit(project / "pipeline.py", "LOOPS = 2", "LOOPS = 3")
    edit(
        project / "pipeline.py",
        "    print(reply_check)",
        "        extra_agent(reply_check)\n    print(reply_check)",
    )
    edit(
        project / "pipeline.py",
        "def main(argv):",
        '@monitor("extra_agent", parent_agent="qa_check")\n'
        "def extra_agent(text):\n    return len(text)\n\n\ndef main(argv):",
    )
    moved = cli("snapshot", "verify", env=env)
    assert moved.returncode == 1, (moved.stdout, moved.stderr)
    verdicts = verdicts_of(project, moved.stdout)
    assert verdicts["qa_check"]["status"] == "iteration_count_changed"
    assert "called 3 time(s), pinned 2" in verdicts["qa_check"]["rationale"]
    assert verdicts["extra_agent"]["status"] == "new"


def test_quick_override_timeout_and_refusals(
    project: Path, server: ModelServer, home: Path, tmp_path: Path
) -> None:
    cli, env = pinned_project(project, server, home)

    quick = cli("snapshot", "verify", "--quick", env=env)
    assert quick.returncode == 0 and "fixture" in quick.stdout

    prompt = tmp_path / "draft_v2.md"
    prompt.write_text("Be harsh.", encoding="utf-8")
    before = len(server.chat_requests())
    what_if = cli("snapshot", "verify", "--override", f"draft={prompt}", env=env)
    assert what_if.returncode == 1, (what_if.stdout, what_if.stderr)
    sent = [r for r in server.chat_requests()[before:] if "You compare two outputs" not in r.system]
    assert [r.system for r in sent] == ["Be harsh.", "Check the reply for mistakes; answer OK or list them."]
    # the downstream agent was re-sent the new draft, not the pinned one
    assert (
        sent[1].messages[-1]["content"]
        != json.loads((project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8"))[
            "captures"
        ][0]["io"]["qa_check"][0]["input_messages"][-1]["content"]
    )
    verdicts = verdicts_of(project, what_if.stdout)
    assert verdicts["classify"]["status"] == "unchanged" and "held" in verdicts["classify"]["rationale"]
    assert (verdicts["draft"]["status"], verdicts["draft"]["change"]) == ("regressed", "direct edit")
    assert (verdicts["qa_check"]["status"], verdicts["qa_check"]["change"]) == ("regressed", "downstream")
    unknown = cli("snapshot", "verify", "--override", f"qa_chek={prompt}", env=env)
    assert_clean_error(unknown, 2, "unknown agent 'qa_chek'", "qa_check")

    original = (project / "pipeline.py").read_text(encoding="utf-8")
    edit(
        project / "pipeline.py",
        "def main(argv):",
        "def main(argv):\n    print('cannot start: no config', file=sys.stderr)\n    raise SystemExit(5)",
    )
    no_trace = cli("snapshot", "verify", env=env)
    assert_clean_error(no_trace, 2, "exited 5 and wrote no trace", "cannot start: no config")
    (project / "pipeline.py").write_text(original, encoding="utf-8")

    # the pipeline starts a grandchild and sleeps: on timeout both must be gone
    edit(
        project / "pipeline.py",
        "def main(argv):",
        "import subprocess, time\n\n\ndef main(argv):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "    open('pids.txt', 'w').write(f'{os.getpid()} {child.pid}')\n"
        "    time.sleep(60)",
    )
    slow = cli("snapshot", "verify", "--timeout", "2", env=env)
    assert_clean_error(slow, 2, "--timeout of 2 s")
    for pid in map(int, (project / "pids.txt").read_text().split()):
        assert wait_dead(pid), f"process {pid} survived the timeout"


def test_python_c_is_refused_unless_quick_only(tmp_path: Path, server: ModelServer, home: Path) -> None:
    project = tmp_path / "proj"
    make_project(project)
    env = server_env(server.openai_url)
    code = "import sys; sys.argv = ['x']; import pipeline; pipeline.main(['x'])"
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=project, env=isolated_env(home, env), capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    cli = CLI("proveai", project, home)
    refused = cli("snapshot", "init", env=env)
    assert_clean_error(refused, 2, "python -c", "--quick-only")
    assert not (project / "proveai" / "snapshots" / "latest.json").exists()
    allowed = cli("snapshot", "init", "--quick-only", env=env)
    assert allowed.returncode == 0 and "quick-only" in allowed.stdout
    verify = cli("snapshot", "verify", env=env)
    assert verify.returncode == 0 and "fixture" in verify.stdout
    # a script read from stdin has no command to re-run either
    piped = subprocess.run(
        [sys.executable, "-"], cwd=project, env=isolated_env(home, env), capture_output=True, text=True,
        input=(project / "pipeline.py").read_text(encoding="utf-8"), timeout=120,
    )
    assert piped.returncode == 0, piped.stderr
    assert_clean_error(cli("snapshot", "init", "piped", env=env), 2, "stdin", "--quick-only")
    assert not (project / "proveai" / "snapshots" / "piped.json").exists()


def test_step_summary_and_ci_targeting(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    assert cli("snapshot", "init", "other", env=env).returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "pin")
    git(project, "checkout", "-q", "-b", "feature")
    summary = project.parent / "summary.md"
    ci_env = {**env, "CI": "true", "GITHUB_BASE_REF": "main", "GITHUB_STEP_SUMMARY": str(summary)}

    untouched = cli("snapshot", "verify", env=ci_env)
    assert untouched.returncode == 0, untouched.stderr
    assert "auto-targeted 0 of 2 snapshot(s) by git diff main...HEAD" in untouched.stdout

    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
    git(project, "commit", "-q", "-am", "edit prompt")
    touched = cli("snapshot", "verify", env=ci_env)
    assert touched.returncode == 1, (touched.stdout, touched.stderr)
    assert "auto-targeted 2 of 2" in touched.stdout
    text = summary.read_text(encoding="utf-8")
    assert "| Agent | Verdict | Change | Rationale |" in text
    assert "| draft | ✗ regressed | direct edit | judge: lost the polite tone |" in text

    no_base = cli("snapshot", "verify", "latest", env={**env, "CI": "1", "GITHUB_BASE_REF": "nope"})
    assert no_base.returncode == 1
    fallback = cli("snapshot", "verify", env={**env, "CI": "1", "GITHUB_BASE_REF": "nope"})
    assert "verifying all 2 snapshot(s): git diff against nope or origin/nope failed" in fallback.stdout
    local = cli("snapshot", "verify", "--changed", env=env)
    assert "auto-targeted 2 of 2 snapshot(s) by git diff main...HEAD" in local.stdout
    full = cli("snapshot", "verify", "--full", env=ci_env)
    assert "(--full)" in full.stdout


def test_partial_update_accepts_one_agent_at_a_time(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
    assert cli("snapshot", "verify", env=env).returncode == 1

    unknown = cli("snapshot", "update", "--agent", "drafts", env=env)
    assert_clean_error(unknown, 2, "unknown agent 'drafts'")
    partial = cli("snapshot", "update", "--agent", "draft", env=env)
    assert partial.returncode == 0, partial.stderr
    assert "accepted draft" in partial.stdout
    # the snapshot moved on: the old verify cannot be accepted again
    stale = cli("snapshot", "update", "--agent", "qa_check", env=env)
    assert_clean_error(stale, 2, "is v2 but the last verify")

    still = cli("snapshot", "verify", env=env)
    assert still.returncode == 1
    verdicts = verdicts_of(project, still.stdout)
    assert verdicts["draft"]["status"] == "unchanged" and verdicts["qa_check"]["status"] == "regressed"
    assert cli("snapshot", "update", "--agent", "qa_check", env=env).returncode == 0
    assert cli("snapshot", "verify", env=env).returncode == 0


def test_pin_survives_a_checkout_in_another_folder(tmp_path: Path, server: ModelServer, home: Path) -> None:
    project = tmp_path / "laptop" / "proj"
    make_project(project)
    env = server_env(server.openai_url)
    absolute = __import__("subprocess").run(
        [sys.executable, str(project / "pipeline.py"), "Lost parcel"],
        cwd=project,
        env=isolated_env(home, env),
        capture_output=True,
        text=True,
    )
    assert absolute.returncode == 0, absolute.stderr
    assert CLI("proveai", project, home)("snapshot", "init", env=env).returncode == 0
    text = (project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in text.replace(
        sys.executable, ""
    )  # no path of this machine but the interpreter
    assert json.loads(text)["invocation"]["argv"] == ["pipeline.py", "Lost parcel"]

    moved = tmp_path / "ci" / "checkout"
    moved.parent.mkdir()
    project.rename(moved)
    result = CLI("proveai", moved, home)("snapshot", "verify", env=env)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert all("unchanged" in row for row in table_rows(result.stdout).values())


def test_a_pipeline_exporting_to_its_own_folder_verifies_without_touching_it(
    project: Path, server: ModelServer, home: Path
) -> None:
    # The capture docs' form, FileExporter("./traces"): verify must still find the fresh trace,
    # and the re-run must not add a trace to the user's folder.
    edit(project / "pipeline.py", "exporters=[FileExporter()]", 'exporters=[FileExporter("./traces")]')
    env = server_env(server.openai_url)
    cli = CLI("proveai", project, home)
    first = run_pipeline(project, isolated_env(home, env))
    assert first.returncode == 0, first.stderr
    stored = sorted(p.name for p in (project / "traces").iterdir())
    assert sum(name.endswith(".detection.json") for name in stored) == 1

    init = cli("snapshot", "init", "--traces", "traces", env=env)
    assert init.returncode == 0, init.stderr
    verify = cli("snapshot", "verify", env=env)
    assert verify.returncode == 0, (verify.stdout, verify.stderr)
    assert "Traceback" not in verify.stderr
    after = sorted(p.name for p in (project / "traces").iterdir())
    assert after == stored


def test_one_snapshot_that_cannot_rerun_does_not_hide_the_others(
    project: Path, server: ModelServer, home: Path
) -> None:
    cli, env = pinned_project(project, server, home)
    (project / "other.py").write_text((project / "pipeline.py").read_text(encoding="utf-8"), encoding="utf-8")
    other = subprocess.run(
        [sys.executable, "other.py"],
        cwd=project,
        env=isolated_env(home, env),
        capture_output=True,
        timeout=120,
    )
    assert other.returncode == 0
    assert cli("snapshot", "init", "other", env=env).returncode == 0
    (project / "other.py").unlink()  # its command can no longer run
    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
    summary = project / "step-summary.md"
    both = cli("snapshot", "verify", env={**env, "GITHUB_STEP_SUMMARY": str(summary)})
    # a regression (1) outranks a snapshot that could not be verified (2)
    assert both.returncode == 1, (both.stdout, both.stderr)
    assert "error: snapshot 'other': the pipeline (other.py) exited" in both.stderr
    assert "regressed" in table_rows(both.stdout)["draft"]
    text = summary.read_text(encoding="utf-8")
    assert "> **error:** snapshot 'other': the pipeline (other.py) exited" in text
    assert "| draft | ✗ regressed | direct edit | judge: lost the polite tone |" in text
    alone = cli("snapshot", "verify", "other", env=env)
    assert_clean_error(alone, 2, "the pipeline (other.py) exited")


TOOL_CODE = '''

ORDER_ID = "A-100"


@monitor("lookup_order", kind="TOOL", operation="execute_tool")
def lookup_order(order_id):
    return {"status": "shipped"}
'''


def test_tool_calls_are_pinned_compared_and_diffed(project: Path, server: ModelServer, home: Path) -> None:
    edit(project / "pipeline.py", "LOOPS = 1\n", "LOOPS = 1\n" + TOOL_CODE)
    classify_body = "    return ask(CLASSIFY_PROMPT, ticket)"
    edit(project / "pipeline.py", classify_body, "    lookup_order(ORDER_ID)\n" + classify_body)
    cli, env = pinned_project(project, server, home)
    pinned = json.loads((project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8"))
    call = pinned["captures"][0]["io"]["classify"][0]
    assert call["tool_calls"] == [{"name": "lookup_order", "inputs": {"order_id": "A-100"}}]
    edit(project / "pipeline.py", 'ORDER_ID = "A-100"', 'ORDER_ID = "B-200"')
    drift = cli("snapshot", "verify", env=env)
    assert drift.returncode == 0, (drift.stdout, drift.stderr)
    verdicts = verdicts_of(project, drift.stdout)
    assert verdicts["classify"]["status"] == "drifted"
    assert "tool calls changed" in verdicts["classify"]["rationale"]
    assert verdicts["draft"]["status"] == "unchanged"
    diff = cli("snapshot", "diff", "--agent", "classify", env=env)
    assert diff.returncode == 0, diff.stderr
    lines = diff.stdout.splitlines()
    assert "--- pinned/tool_calls" in lines
    assert any(line.startswith("-") and '"order_id": "A-100"' in line for line in lines)
    assert any(line.startswith("+") and '"order_id": "B-200"' in line for line in lines)
