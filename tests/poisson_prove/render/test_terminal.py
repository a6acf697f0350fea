"""render/terminal.py: the terminal drawing (Rich) with the plain report's lines, a table with
rate bars on a wide terminal and one block per condition on a narrow one; with an attribution,
the where block under each moved row of the blocks, after the wide table."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from poisson_prove.comparison.attribution import AgentCount, Attribution, RowAttribution
from poisson_prove.comparison.result import Comparison
from poisson_prove.render.terminal import WIDE_TERMINAL, print_rich
from tests.poisson_prove.render.reports import SUMMARY, two_conditions


@pytest.fixture
def comparison(tmp_path: Path) -> Comparison:
    return two_conditions(tmp_path)


def drawn(comparison: Comparison, width: int, notes: list[str], attribution: Attribution | None = None,
          ) -> str:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    print_rich(comparison, notes, console, attribution=attribution)
    return console.export_text()


def test_a_wide_terminal_gets_the_same_lines_and_a_table_with_rate_bars(comparison: Comparison) -> None:
    text = drawn(comparison, WIDE_TERMINAL + 12, ["the first run was resumed"])
    lines = text.splitlines()
    assert lines[:5] == SUMMARY
    header = next(line for line in lines if line.lstrip().startswith("condition") and "rates" in line)
    assert header.split() == [
        "condition", "outcome", "before", "after", "b", "c", "p", "q", "result", "rates",
    ]
    assert any("██   |" in line for line in lines)  # before 0.400 as a bar, after 0.050 as none
    assert "─" in text  # the table's rule
    assert "note: the first run was resumed" in lines
    assert any(line.startswith("warning: 4 episodes") for line in lines)


def test_a_narrow_terminal_gets_one_block_per_condition(comparison: Comparison) -> None:
    lines = drawn(comparison, WIDE_TERMINAL - 38, []).splitlines()
    assert "ticket refund · temperature 0.0  trade" in lines
    assert "ticket password · temperature 0.5  worse" in lines
    unresolved = next(line for line in lines if line.startswith("  unresolved   ██"))  # padded to any failure
    assert any(line.startswith("  any failure  ") for line in lines)
    assert "0.400 (80/200) [0.335, 0.469] -> 0.050 (10/200)" in unresolved
    assert not any(line.split()[:2] == ["condition", "outcome"] for line in lines)  # no table of bars


def test_the_where_block_is_under_its_row_in_blocks_and_after_the_wide_table(comparison: Comparison) -> None:
    key = comparison.conditions[0].key
    row = RowAttribution(key, comparison.conditions[0].label, "unresolved", "fell", 70, 130, 70, 130,
                         (AgentCount("draft", 60, 2, ("prompt",)),), "draft", None, ())
    attribution = Attribution(True, None, (row,), 0)
    where = "where: draft 60/70 flipped pairs vs 2/130 unflipped (changed: prompt)"
    lines = drawn(comparison, WIDE_TERMINAL - 38, [], attribution).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  unresolved   ██"))
    below = next(i for i, line in enumerate(lines) if "where: " in line)
    after = next(i for i, line in enumerate(lines) if i > at and line.startswith("  timeout"))
    assert lines[below] == f"    {where}" and at < below < after  # under its row (which may wrap)
    assert any(line.startswith("where (under each row that moved): ") for line in lines)
    lines = drawn(comparison, WIDE_TERMINAL + 12, [], attribution).splitlines()
    assert f"  {row.label} unresolved fell: {where.removeprefix('where: ')}" in lines
