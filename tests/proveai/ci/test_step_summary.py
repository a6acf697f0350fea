"""ci/step_summary.py: the step summary is appended where $GITHUB_STEP_SUMMARY says; a
summary that cannot be written comes back as a warning, never an error."""

from __future__ import annotations

from pathlib import Path

from proveai.ci.step_summary import write_step_summary
from proveai.render.verify import step_summary_markdown


def test_appends_and_reports_an_unwritable_path(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    markdown = step_summary_markdown([], "auto-targeted 0 of 1 snapshot(s)", ["snapshot 'a': gone"])
    assert write_step_summary(markdown, env=env) is None
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## proveai snapshot verify")
    assert "_auto-targeted 0 of 1 snapshot(s)_" in text and "> **error:** snapshot 'a': gone" in text
    problem = write_step_summary(markdown, env={"GITHUB_STEP_SUMMARY": str(tmp_path)})  # a folder
    assert problem is not None and problem.startswith(f"could not write $GITHUB_STEP_SUMMARY ({tmp_path})")
    assert write_step_summary(markdown, env={}) is None
