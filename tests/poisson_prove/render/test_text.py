"""render/text.py: a comparison as people read it. The plain report (a pipe's) in its line
order with its cell formats (the terminal's drawing: test_terminal.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import poisson_prove
from poisson_prove.comparison.attribution import AgentCount, Attribution, RowAttribution
from poisson_prove.comparison.result import Comparison, OutcomeResult, Rate
from poisson_prove.render.attribution import LEGEND
from poisson_prove.render.text import method_line, plain_report, rate_text, result_text
from tests.poisson_prove.render.reports import SUMMARY, outcomes, two_conditions
from tests.poisson_prove.runs import from_outcomes, write_run


@pytest.fixture
def comparison(tmp_path: Path) -> Comparison:
    return two_conditions(tmp_path)


def rate(**fields: object) -> Rate:
    values = {"n": 194, "k": 61, "share": 61 / 194, "lo": 0.2541, "hi": 0.3812, "starred": False,
              "variance": None, "effective_n": None}
    return Rate(**{**values, **fields})  # type: ignore[arg-type]


def test_a_rate_is_its_share_counts_and_interval() -> None:
    assert rate_text(rate()) == "0.314 (61/194) [0.254, 0.381]"
    assert rate_text(rate(starred=True)) == "0.314* (61/194) [0.254, 0.381]"  # censored before the horizon
    assert rate_text(rate(), terminal=True) == "0.314\n[0.254, 0.381]"
    assert rate_text(rate(n=0, k=0, share=None, lo=None, hi=None)) == "- (0/0)"
    assert rate_text(rate(share=None), terminal=True) == "-"


def test_no_change_says_the_smallest_change_it_could_have_shown_rounded_up(comparison: Comparison) -> None:
    row: OutcomeResult = comparison.conditions[1].outcomes[1]
    assert row.verdict == "no change"
    assert result_text(dataclasses.replace(row, mde_rise=0.1231, mde_fall=0.05)) == (
        "no change, could have shown +0.124 / -0.050"
    )
    assert result_text(dataclasses.replace(row, mde_rise=0.2, mde_fall=None), terminal=True) == (
        "no change\n+0.200 / no fall"
    )
    assert result_text(dataclasses.replace(row, mde_rise=None, mde_fall=None)) == (
        "no change, could have shown no rise / no fall"
    )
    assert result_text(dataclasses.replace(row, verdict="rose")) == "rose"


def test_the_method_line_says_why_the_method_was_used(comparison: Comparison) -> None:
    assert method_line(comparison) == SUMMARY[1]
    chosen = dataclasses.replace(comparison, method="fisher", method_is_default=False, paired=False)
    assert method_line(chosen) == (
        "method Fisher exact test on independent runs (Fisher), chosen with --method"
    )
    unpaired = dataclasses.replace(comparison, method="fisher", paired=False)
    assert method_line(unpaired).endswith("(Fisher), the default for runs not paired at sweep time")
    settled = dataclasses.replace(comparison, sequential={"run": "b", "looks": {"k1": [40, 80], "k2": [40]}})
    assert method_line(settled) == (
        "method group-sequential paired test on shared seeds (McNemar, sequential p-values from the 2 looks "
        'run "b" recorded with --stop-when-settled), the default for runs paired at sweep time'
    )


def test_the_plain_report_in_its_line_order(comparison: Comparison) -> None:
    text = plain_report(comparison, notes=["the first run was resumed"])
    assert text.endswith("\n") and "\x1b[" not in text and "│" not in text and "─" not in text
    lines = text.splitlines()
    assert lines[:5] == SUMMARY and lines[5] == ""
    assert lines[6] == (
        "rates by 20 steps, 95% Wilson intervals (* censored before it); p: McNemar mid-p (the exact p is "
        "p_exact in --json); q: Benjamini-Hochberg over 4 tests; "
        "any failure: the union of the failure outcomes, Benjamini-Hochberg over its own 2 tests"
    )
    assert lines[7].split() == [
        "condition", "verdict", "outcome", "before", "after", "b", "c", "p", "q", "result",
    ]
    trade_row = lines[8]
    assert trade_row.startswith("ticket refund · temperature 0.0    trade    unresolved   0.400 (80/200) [")
    assert trade_row.endswith("  70   0  8.5e-22  1.7e-21  fell")  # p below 0.001 in scientific form
    assert lines[10].split()[:2] == ["any", "failure"]  # each condition's union row after its outcomes
    assert lines[12].endswith("no change, could have shown +0.052 / no fall")
    coverage = lines.index("coverage: episodes without an outcome (left out of every rate)")
    assert coverage == 15 and lines[14] == ""
    assert lines[coverage + 3].split() == [
        "ticket", "password", "·", "temperature", "0.5", "4/200", "0/200", "RuntimeError", "4", "-", "0.123",
    ]
    tail = lines[lines.index("note: the first run was resumed") :]
    assert len(tail) == 2 and tail[1].startswith("warning: 4 episodes with an outcome are left out")


def test_a_report_without_missing_outcomes_says_so_in_one_line(tmp_path: Path) -> None:
    a = write_run(tmp_path, from_outcomes({("refund", 0.0): outcomes(unresolved=20)}), name="a")
    write_run(tmp_path, from_outcomes({("refund", 0.0): outcomes(unresolved=20)}), name="b", paired_with=a)
    lines = plain_report(poisson_prove.compare("a", "b", store=tmp_path)).splitlines()
    assert lines[-1] == "coverage: every episode has an outcome (200 before, 200 after)"
    assert not any(line.startswith(("note:", "warning:", "trade ")) for line in lines)


def test_the_where_block_is_under_its_row(comparison: Comparison) -> None:
    first = comparison.conditions[0]
    row = RowAttribution(first.key, first.label, "unresolved", "fell", 70, 130, 70, 130,
                         (AgentCount("draft", 60, 2, ()),), "draft", None, ())
    lines = plain_report(comparison, attribution=Attribution(True, None, (row,), 0)).splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("condition "))
    moved = next(i for i, line in enumerate(lines) if line.startswith(first.label))
    assert lines[moved].split()[-1] == "fell" and " unresolved " in lines[moved]
    column = lines[header].index("outcome")
    assert lines[moved + 1] == " " * column + "where: draft 60/70 flipped pairs vs 2/130 unflipped"
    assert lines[moved + 2].lstrip().startswith("timeout ")  # the condition's next row
    legend = [line for line in lines if line.startswith("where")]
    assert legend == [LEGEND]  # one legend line, after the table: no check was compared
    assert lines[lines.index(LEGEND) - 1].lstrip().startswith(("any failure", "unresolved", "timeout"))
    # without an attribution (or one that says nothing) the report is as it was
    assert plain_report(comparison, attribution=Attribution(False, "x", code="no_agent_spans")) == \
        plain_report(comparison)
