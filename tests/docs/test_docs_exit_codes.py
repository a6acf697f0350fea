"""docs/README.md's "Exit codes at a glance" is the two command lines' exit-code tables:
`poisson_prove.errors.ProveExit` and `proveai.errors.ProveAIExit`, read from the page itself.

Every code a table holds has a row on the page saying what the table's name says, and the page
documents no code the table lacks ("—" marks a code the command line does not use)."""

from __future__ import annotations

import re
from enum import IntEnum

import pytest

from poisson_prove.errors import ProveExit
from proveai.errors import ProveAIExit
from tests.docs.snippets import DOCS

# what the page's cell for each code says, in a word or two
MEANINGS: dict[str, dict[IntEnum, str]] = {
    "poisson-prove": {
        ProveExit.OK: "done",
        ProveExit.REFUSED: "refused before anything ran",
        ProveExit.USAGE: "the command line is wrong",
        ProveExit.STOPPED: "stopped or failed after work started",
        ProveExit.WORSE: "a failure outcome rose",
        ProveExit.INCONCLUSIVE: "inconclusive",
        ProveExit.UNEXPECTED: "an unexpected failure",
        ProveExit.INTERRUPTED: "interrupted",
    },
    "proveai": {
        ProveAIExit.OK: "no regression",
        ProveAIExit.REGRESSION: "a regression: the gate fails",
        ProveAIExit.USAGE: "usage, input or i/o error",
        ProveAIExit.INCONCLUSIVE: "inconclusive",
        ProveAIExit.UNEXPECTED: "an unexpected failure",  # "the same" as poisson-prove's
        ProveAIExit.INTERRUPTED: "interrupted",
    },
}
TABLES: dict[str, type[IntEnum]] = {"poisson-prove": ProveExit, "proveai": ProveAIExit}


def documented() -> dict[str, dict[int, str]]:
    """The page's table: for each command line, code -> what its cell says (lower case)."""
    text = (DOCS / "README.md").read_text(encoding="utf-8")
    section = text.split("## Exit codes at a glance", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    header = next(line for line in section.splitlines() if line.startswith("| code |"))
    columns = [cell.strip().strip("`") for cell in header.strip("|").split("|")][1:]
    assert columns == ["poisson-prove", "proveai"], header
    table: dict[str, dict[int, str]] = {name: {} for name in columns}
    for row in rows:
        code, *cells = (cell.strip() for cell in row.strip("|").split("|"))
        for name, cell in zip(columns, cells, strict=True):
            if cell == "the same":
                cell = cells[0]
            if cell != "—":
                table[name][int(code)] = cell.lower()
    return table


@pytest.mark.parametrize("command", list(TABLES))
def test_the_page_lists_exactly_the_codes_of_the_table(command: str) -> None:
    table = TABLES[command]
    assert set(documented()[command]) == {int(code) for code in table}
    assert set(MEANINGS[command]) == set(table)  # a new code needs its meaning here and a row


@pytest.mark.parametrize("command", list(TABLES))
def test_each_code_means_on_the_page_what_its_name_says(command: str) -> None:
    page = documented()[command]
    wrong = {
        code.name: page[int(code)]
        for code, words in MEANINGS[command].items()
        if words not in page[int(code)]
    }
    assert not wrong, f"docs/README.md's {command} column says otherwise: {wrong}"
