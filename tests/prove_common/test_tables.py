"""The one table drawer: aligned plain text on a pipe, a Rich table on a terminal whose cells
are never read as markup (an agent named "[/oops]" crashed `proveai status` once)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from prove_common.tables import Column, Table, clip_text, draw_table, plain_lines, rich_table
from tests.conftest import isolated_env, run_on_terminal

MARKUP_LIKE = ("[/oops]", "[bold red]not bold[/bold red]", "[link=http://x]y[/link]", "a [b] c")


def _table(**extra: object) -> Table:
    return Table(
        title="runs in [store]",
        headers=("name", "n", "note"),
        rows=(("before", "1,746", "all fine"), ("[/oops]", "12", "[bold]x[/bold]")),
        right=frozenset({1}),
        **extra,  # type: ignore[arg-type]
    )


def test_plain_lines_align_columns_and_keep_data_as_is() -> None:
    assert plain_lines(_table()) == [
        "runs in [store]",
        "name         n  note",
        "before   1,746  all fine",
        "[/oops]     12  [bold]x[/bold]",
    ]


def test_plain_lines_without_title_with_caption_and_clipped_column() -> None:
    table = _table(caption="2 runs", columns={2: Column(clip=5)})
    table = Table(None, table.headers, table.rows, table.right, caption="2 runs", columns=table.columns)
    assert plain_lines(table) == [
        "name         n  note",
        "before   1,746  all …",
        "[/oops]     12  [bol…",
        "2 runs",
    ]


def test_clip_text_folds_whitespace_first() -> None:
    assert clip_text("a\n  b   c", 10) == "a b c"
    assert clip_text("abcdef", 4) == "abc…"


SCRIPT = """
import json, sys
from prove_common.tables import Column, Table, draw_table
cells = json.loads(sys.argv[1])
table = Table(
    title=cells[0], headers=("agent", "status", "n"),
    rows=tuple((c, c, str(i)) for i, c in enumerate(cells)),
    right=frozenset({2}), caption=cells[-1],
    styles=tuple(((None, "bold red", None)) for _ in cells),
    columns={0: Column(no_wrap=True)}, box="HEAVY_HEAD",
)
draw_table(table, pretty=True, color=sys.argv[2] == "color")
"""


def test_markup_like_data_prints_as_itself_on_a_real_terminal(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, {"TERM": "xterm-256color"})
    code, drawn, errors = run_on_terminal(
        "python", ["-c", SCRIPT, json.dumps(MARKUP_LIKE), "color"], tmp_path, env
    )
    assert code == 0, errors
    assert "MarkupError" not in errors and errors == ""
    for cell in MARKUP_LIKE:
        assert cell in drawn, (cell, drawn)
    assert "\x1b[" in drawn  # styled: a Rich table on a terminal, not plain lines
    assert "┏" in drawn  # the box the table asked for


def test_no_color_draws_the_rich_table_without_any_escape_code(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, {"TERM": "xterm-256color"})
    code, drawn, errors = run_on_terminal(
        "python", ["-c", SCRIPT, json.dumps(MARKUP_LIKE), "none"], tmp_path, env
    )
    assert code == 0, errors
    assert "\x1b[" not in drawn
    assert "[/oops]" in drawn and "┏" in drawn


def test_draw_table_on_a_pipe_is_the_plain_lines() -> None:
    out = io.StringIO()
    draw_table(_table(), out, pretty=False)
    assert out.getvalue() == "\n".join(plain_lines(_table())) + "\n"


def test_section_ends_put_a_rule_under_a_group_of_rows_on_a_terminal_only() -> None:
    table = _table(section_ends=frozenset({0}))
    drawn = rich_table(table)
    assert [row.end_section for row in drawn.rows] == [True, False]
    assert plain_lines(table) == plain_lines(_table())  # a pipe gets the same lines
