"""`proveai experiment new/list/show` (cli/experiment.py), run for real: the lines each action
prints, the experiment file read back with an independent YAML reader, and the refusals.
Replaying with an experiment is `proveai run --experiment`'s (test_run.py, test_baseline.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from tests.conftest import CLI, assert_clean_error

PROMPT = "Check the reply.\nBe strict about refunds.\n"


def test_new_list_and_show(proveai_cli: CLI, workdir: Path) -> None:
    empty = proveai_cli("experiment", "list")
    assert empty.stdout == "no experiments in proveai/experiments\n"
    assert (empty.stderr, empty.returncode) == ("", 0)

    (workdir / "prompts").mkdir()
    (workdir / "prompts" / "qa.md").write_text(PROMPT, encoding="utf-8")
    new = proveai_cli(
        "experiment", "new", "fix", "--override", "qa_check=prompts/qa.md", "--model", "draft=gpt-4o",
        "--description", "stricter QA",
    )
    assert new.stdout == "Wrote experiment 'fix' — 2 agent override(s) → proveai/experiments/fix.yaml\n"
    assert (new.stderr, new.returncode) == ("", 0)
    saved = yaml.safe_load((workdir / "proveai" / "experiments" / "fix.yaml").read_text(encoding="utf-8"))
    sha = hashlib.sha256(PROMPT.encode()).hexdigest()
    assert saved["overrides"] == {
        "qa_check": {"prompt": PROMPT, "prompt_file": "prompts/qa.md", "prompt_sha256": sha},
        "draft": {"model": "gpt-4o"},
    }
    created = saved["created"]

    listed = proveai_cli("experiment", "list")
    assert listed.stdout == f"fix  overrides: draft, qa_check  created {created}\n"
    (workdir / "prompts" / "qa.md").write_text("changed after saving", encoding="utf-8")
    shown = proveai_cli("experiment", "show", "fix")
    assert shown.returncode == 0 and shown.stderr == ""
    assert shown.stdout.splitlines() == [
        "experiment fix",
        f"  created: {created}",
        "  description: stricter QA",
        "  draft:",
        "    model: gpt-4o",
        "  qa_check:",
        f"    prompt: from prompts/qa.md (sha256 {sha[:12]}…), {len(PROMPT)} chars",
        "      Check the reply.",  # the prompt saved, not the file as it is now
    ]


def test_refusals_are_one_error_line_and_write_nothing(proveai_cli: CLI, workdir: Path) -> None:
    assert_clean_error(proveai_cli("experiment", "new", "bad", "--override", "qa_check"), 2, "AGENT=PATH")
    nothing = proveai_cli("experiment", "new", "none")
    assert_clean_error(nothing, 2, "an experiment needs at least one override")
    assert_clean_error(
        proveai_cli("experiment", "new", "x", "--override", "qa=prompts/missing.md"), 2, "prompts/missing.md"
    )
    assert not (workdir / "proveai" / "experiments").exists()
    unknown = proveai_cli("experiment", "show", "nope")
    assert_clean_error(unknown, 2, "no experiment named 'nope'")
    assert "next: proveai experiment new nope --override AGENT=PATH" in unknown.stderr
    assert proveai_cli("experiment", "new", "fix", "--model", "draft=gpt-4o").returncode == 0
    again = proveai_cli("experiment", "new", "fix", "--model", "draft=gpt-4o-mini")
    assert_clean_error(again, 2, "experiment 'fix' already exists")
    saved = yaml.safe_load((workdir / "proveai" / "experiments" / "fix.yaml").read_text(encoding="utf-8"))
    assert saved["overrides"] == {"draft": {"model": "gpt-4o"}}
    no_action = proveai_cli("experiment")
    assert no_action.returncode == 2 and "ACTION" in no_action.stderr
