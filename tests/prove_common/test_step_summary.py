"""prove_common/step_summary.py: cells render as the text they hold, the summary is appended
(an unwritable one is a warning), and an annotation cannot be ended or forged by its text."""

from __future__ import annotations

from pathlib import Path

import pytest

from prove_common.step_summary import annotation, append_step_summary, in_github_actions, md_cell, md_table


def test_a_cell_is_its_text_and_a_table_is_header_rule_rows() -> None:
    assert md_cell("a | <b>*x*</b> [l](u) `c` \\ &\n  next") == (
        "a &#124; &#60;b&#62;&#42;x&#42;&#60;/b&#62; &#91;l&#93;(u) &#96;c&#96; &#92; &#38; next"
    )
    assert md_table(("A", "p (BH)"), [("x|y", 1), ("", "z")]) == [
        "| A | p (BH) |", "| --- | --- |", "| x&#124;y | 1 |", "|  | z |",
    ]


def test_appends_and_an_unwritable_path_comes_back_in_words(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n", encoding="utf-8")
    assert append_step_summary("## mine\n", {"GITHUB_STEP_SUMMARY": str(summary)}) is None
    assert summary.read_text(encoding="utf-8") == "earlier\n## mine\n"
    problem = append_step_summary("x", {"GITHUB_STEP_SUMMARY": str(tmp_path)})  # a folder
    assert problem is not None and problem.startswith(f"could not write $GITHUB_STEP_SUMMARY ({tmp_path})")
    assert append_step_summary("x", {}) is None


def test_annotations_escape_what_would_end_the_command() -> None:
    line = annotation("warning", "100% worse\nsecond::line", title="cond: a, b", file="specs/p,1.toml")
    assert line == "::warning file=specs/p%2C1.toml,title=cond%3A a%2C b::100%25 worse%0Asecond::line"
    assert "\n" not in line
    assert annotation("error", "plain") == "::error::plain"
    with pytest.raises(ValueError):
        annotation("debug", "x")
    assert in_github_actions({"GITHUB_ACTIONS": "true"}) and not in_github_actions({"CI": "true"})
