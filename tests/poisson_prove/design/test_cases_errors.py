"""Every misuse of a case axis through the installed script: exit 1, stdout empty, one `error:`
line naming the spec's file and line, the key and the cases file, a `next:` line where a fix
exists, and nothing written (not even the store folder). A FIFO or /dev/zero never hangs it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import tree, write

AGENT = """
import random
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("bad" if random.Random(seed).random() < 0.3 else "ok", 1, 5, {"ticket": cfg["ticket"]})
"""

SPEC = """
target = "agent:rollout"
target_id = "bench"
replicates = 3

[axes.ticket]
type = "categorical"
cases = true
{ticket}

[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
{extra}
"""


def _spec(workdir: Path, ticket: str, extra: str = "") -> None:
    write(workdir, "agent.py", AGENT)
    (workdir / "prove.toml").write_text(SPEC.format(ticket=ticket, extra=extra).lstrip(), encoding="utf-8")


def _refused(prove, workdir: Path, *fragments: str, code: int = 1) -> str:
    before = tree(workdir)
    result = prove("sweep", "--yes", "--max-mde", "1")
    assert result.stdout == "", result.stdout
    assert_clean_error(result, code, *fragments)
    assert tree(workdir) == before  # nothing written, not even the store folder
    return result.stderr


def test_a_missing_cases_file_names_the_key_and_the_file(prove, workdir) -> None:
    _spec(workdir, 'values_from = "tickets.txt"')
    stderr = _refused(prove, workdir, "prove.toml:8: axes.ticket.values_from: no file tickets.txt")
    assert "next: values_from is read from the spec's folder" in stderr


def test_a_fifo_or_a_device_is_refused_without_hanging(prove, workdir) -> None:
    os.mkfifo(workdir / "tickets.txt")  # nobody writes to it: a blocking open would hang the sweep
    _spec(workdir, 'values_from = "tickets.txt"')
    _refused(prove, workdir, "prove.toml:8: axes.ticket.values_from:", "tickets.txt is not a regular file")
    (workdir / "tickets.txt").unlink()
    (workdir / "tickets.txt").symlink_to("/dev/zero")
    _refused(prove, workdir, "tickets.txt is not a regular file")


def test_a_cases_file_past_64_mib_is_refused(prove, workdir) -> None:
    with (workdir / "tickets.txt").open("wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # sparse
    _spec(workdir, 'values_from = "tickets.txt"')
    _refused(prove, workdir, "tickets.txt is larger than 64 MiB", "next: keep only the case ids")


def test_a_repeated_or_missing_id_in_the_file(prove, workdir) -> None:
    write(workdir, "tickets.jsonl", '{"id": "t1"}\n{"id": "t2"}\n{"id": "t1"}\n')
    _spec(workdir, 'values_from = "tickets.jsonl"\ncolumn = "id"')
    stderr = _refused(prove, workdir, "repeats the case id 't1' (lines 1 and 3)")
    assert "next: each case once: its repeats are the spec's replicates" in stderr
    write(workdir, "tickets.jsonl", '{"id": "t1"}\n{"name": "t2"}\n')
    _refused(prove, workdir, "tickets.jsonl line 2 has no field 'id'", "next: column names the field")
    write(workdir, "tickets.csv", "ticket,topic\nt1,a\n")
    _spec(workdir, 'values_from = "tickets.csv"\ncolumn = "id"')
    _refused(prove, workdir, "tickets.csv has no column 'id'", "next: its header names: ticket, topic")


@pytest.mark.parametrize(
    ("ticket", "extra", "fragments"),
    [
        (
            'values_from = "tickets.jsonl"',
            "",
            [
                "prove.toml:8: axes.ticket.values_from:",
                "column must name the field",
                'next: add column = "id"',
            ],
        ),
        (
            'values_from = "tickets.txt"\ncolumn = "id"',
            "",
            ["prove.toml:8: axes.ticket.values_from:", "column is for .jsonl and .csv files"],
        ),
        (
            'values = ["t1"]\nvalues_from = "tickets.txt"',
            "",
            [
                "prove.toml:9:",
                "[axes.ticket] has both values and values_from",
                "next: give the case ids one way",
            ],
        ),
        ('column = "id"\nvalues = ["t1"]', "", ["prove.toml:8:", "axes.ticket.column names the id's field"]),
        (
            "",
            "",
            ["prove.toml:5:", "[axes.ticket] has no values", "next: give the case ids as values = [...]"],
        ),
        ('values = ["1", 1]', "", ["prove.toml:8:", "axes.ticket.values: the case id '1' is given twice"]),
        ('values = ["a", 0.5]', "", ["prove.toml:8:", "a case id is a name or an integer, got 0.5"]),
        ('values_from = ""', "", ["prove.toml:8:", "values_from must name a file beside the spec"]),
        (
            'values = ["t1"]',
            '[axes.other]\ntype = "categorical"\ncases = true\nvalues = ["a"]\n',
            [
                "prove.toml:15:",
                "axes.other.cases: one axis at most is the spec's cases, and axes.ticket already is",
            ],
        ),
        (
            'values = ["t1"]',
            '[axes.temp]\ntype = "continuous"\ncases = "yes"\nvalues = [0.1]\n',
            ["prove.toml:15:", "axes.temp.cases must be true or false, got 'yes'"],
        ),
        (
            'values = ["t1"]',
            '[axes.temp]\ntype = "integer"\ncases = true\nvalues = [1]\n',
            ["prove.toml:15:", 'axes.temp.cases = true needs type = "categorical"', "next: set type"],
        ),
        (
            'values = ["t1"]',
            '[axes.model]\ntype = "categorical"\nvalues_from = "models.txt"\n',
            [
                "prove.toml:15:",
                "axes.model.values_from reads a benchmark's case ids",
                "next: add cases = true",
            ],
        ),
    ],
)
def test_misuses_of_the_case_axis(prove, workdir, ticket: str, extra: str, fragments: list[str]) -> None:
    write(workdir, "tickets.txt", "t1\nt2\n")
    write(workdir, "tickets.jsonl", '{"id": "t1"}\n')
    _spec(workdir, ticket, extra)
    _refused(prove, workdir, *fragments)


def test_stop_when_settled_is_refused_for_a_benchmark(prove, workdir) -> None:
    _spec(workdir, 'values = ["t1", "t2", "t3", "t4"]')
    first = prove("sweep", "--yes", "--max-mde", "1", "--name", "a")
    assert first.returncode == 0, first.stderr
    before = tree(workdir)
    result = prove("sweep", "--yes", "--max-mde", "1", "--pair-with", "a", "--stop-when-settled")
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: --stop-when-settled cannot stop a benchmark (axes.ticket has cases = true): its rule stops "
        "each condition on that condition's own test, and a benchmark's verdict is over its cases",
        "next: poisson-prove sweep --pair-with latest --yes   (the whole plan, without stopping)",
    ]
    assert result.returncode == 2
    assert tree(workdir) == before
