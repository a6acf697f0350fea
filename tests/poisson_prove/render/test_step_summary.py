"""render/step_summary.py: check's step summary is the printed table as Markdown under the
gate's verdict, and each condition that got worse gets one annotation naming what rose."""

from __future__ import annotations

from pathlib import Path

import pytest

from poisson_prove.comparison import compare
from poisson_prove.comparison.gate import gate
from poisson_prove.render import step_summary
from poisson_prove.render.step_summary import check_markdown, worse_annotations
from poisson_prove.render.text import condition_table
from tests.poisson_prove.runs import store_with_pair


def test_the_summary_is_the_gate_and_the_printed_table(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, a, b = store_with_pair(workdir)
    worse = compare(b.run_id, a.run_id, store=store)  # 5 -> 50 unresolved in refund
    gated = gate(worse, 0.3)
    text = check_markdown(worse, gated, gated.exit_code)
    assert text.startswith("## poisson-prove check: worse (exit 4)\n")
    assert f"**{b.name}** → **{a.name}**" in text
    table = condition_table(worse)
    assert "| " + " | ".join(table.headers) + " |" in text
    # every printed row is a Markdown row, the interval brackets as entities (no link syntax)
    assert text.count("\n| ") == len(table.rows) + 2 and "&#91;0.338, 0.514&#93;" in text
    monkeypatch.setattr(step_summary, "MAX_ROWS", 1)
    cut = check_markdown(worse, gated, 4)
    assert cut.count("\n| ") == 3 and len(table.rows) > 1
    assert f"… and {len(table.rows) - 1} more rows (`poisson-prove check --json` has every row)" in cut
    inconclusive = compare(a.run_id, b.run_id, store=store)
    weak = gate(inconclusive, 0.0001)
    assert weak.status == "inconclusive"
    text = check_markdown(inconclusive, weak, weak.exit_code)
    assert text.startswith("## poisson-prove check: inconclusive (exit 5)\n")
    assert f"> **{weak.message()}**" in text


def test_one_annotation_per_condition_that_got_worse(workdir: Path) -> None:
    store, a, b = store_with_pair(workdir)
    spec = workdir / "specs" / "prove.toml"
    worse = compare(b.run_id, a.run_id, store=store)
    lines = worse_annotations(worse, spec=str(spec), workspace=workdir)
    assert lines == [
        "::warning file=specs/prove.toml,title=poisson-prove check%3A ticket refund · temperature 0.0 worse::"
        "unresolved rose from 0.042 (5/118) [0.018, 0.095] to 0.424 (50/118) [0.338, 0.514] (q 4.5e-13): "
        f"{b.name} -> {a.name} (paired test on shared seeds)"
    ]
    elsewhere = worse_annotations(worse, spec="/somewhere/else.toml", workspace=workdir)
    assert elsewhere[0].startswith("::warning title=")  # no file= GitHub could not find
    assert worse_annotations(compare(a.run_id, b.run_id, store=store), workspace=workdir) == []
