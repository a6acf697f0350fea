"""The pipeline example end to end through the installed script, as docs/comparing.md runs it:
`init --example pipeline`, its sweep and its patched twin on the same seeds, then `diff` names
the patched agent (draft) for every row that moved, in text and --json, with the draft's JSON
check compared paired; `inspect --pair` shows a flipped pair side by side with the first
divergence on draft; unpaired runs and runs without agents say why no agent is named."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import CLI, assert_clean_error

PATCHED = "poisson_prove.examples.mock_pipeline:rollout_patched"


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> CLI:
    root = tmp_path_factory.mktemp("pipeline")
    (root / "home").mkdir()
    (root / "work").mkdir()
    prove = CLI("poisson-prove", root / "work", root / "home")
    written = prove("init", "--example", "pipeline")
    assert written.returncode == 0, written.stderr
    assert "classify -> draft -> qa_check" in written.stdout
    for args in (
        ("--name", "before"),
        ("--name", "after", "--target", PATCHED, "--pair-with", "before"),
        ("--name", "unpaired", "--target", PATCHED),  # a salt of its own: no twins
    ):
        done = prove("sweep", "--yes", "--replicates", "150", "--max-mde", "0.5", *args)
        assert done.returncode == 0, done.stderr
    return prove


def test_diff_names_the_patched_agent_in_text_and_json(swept: CLI) -> None:
    text = swept("diff", "before", "after")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    # each moved row has its where block under it, starting under the outcome column
    header = next(line for line in lines if line.startswith("condition "))
    wheres = [i for i, line in enumerate(lines) if line.lstrip().startswith("where: ")]
    assert wheres and all(lines[i].index("where: ") == header.index("outcome") for i in wheres)
    assert all(" malformed " in lines[i - 1] and lines[i - 1].endswith(" rose") for i in wheres)
    assert all(" where: draft " in lines[i] and "(changed: code, prompt)" in lines[i] for i in wheres)
    assert all("draft json_valid" in lines[i + 1] for i in wheres)  # its check, aligned below
    assert sum(line.startswith("where (under each row that moved): ") for line in lines) == 1

    document = json.loads(swept("diff", "before", "after", "--json").stdout)
    attribution = document["attribution"]
    assert attribution["available"] is True
    rose = [
        (c["label"], r["outcome"]) for c in document["conditions"] for r in c["outcomes"]
        if r["verdict"] in ("rose", "fell")
    ]
    assert [(r["label"], r["outcome"]) for r in attribution["rows"]] == rose
    for row in attribution["rows"]:
        assert row["named"] == "draft" and row["reason"] is None
        assert row["flipped_read"] == row["flipped_pairs"] > 0  # every pair read at this size
        draft = row["agents"][0]
        assert draft["agent"] == "draft" and draft["flipped"] > 0.9 * row["flipped_pairs"]
        assert draft["unflipped"] <= 0.05 * row["unflipped_pairs"]  # the unchanged agents stay identical
        (check,) = row["checks"]
        assert (check["agent"], check["check"], check["test"]) == ("draft", "json_valid", "mcnemar")
        assert check["after"] > check["before"] and check["q_value"] < 0.05
    assert attribution["check_tests"] == len({row["key"] for row in attribution["rows"]})


def test_inspect_pair_shows_a_flipped_pair_side_by_side(swept: CLI) -> None:
    document = json.loads(swept("diff", "before", "after", "--json").stdout)
    row = document["attribution"]["rows"][0]
    # the first replicate of that condition whose malformed outcome flipped, read with pyarrow
    outcomes = []
    for run in ("before", "after"):
        run_id = document[run]["run_id"]
        folder = swept.cwd / "prove-runs" / run_id / "episodes"
        table = pq.read_table(folder, columns=["cell", "replicate", "outcome"])
        columns = (table.column(c).to_pylist() for c in table.column_names)
        rows = zip(*columns, strict=True)
        outcomes.append({rep: outcome for cell, rep, outcome in rows if cell == row["key"]})
    replicate = next(
        r for r in sorted(outcomes[0]) if (outcomes[0][r] == "malformed") != (outcomes[1][r] == "malformed")
    )
    episode = f"{row['label']}/{replicate}"
    shown = swept("inspect", "--pair", "before", "after", "--episode", episode, "--json")
    assert shown.returncode == 0, shown.stderr
    episodes = json.loads(shown.stdout)["pair"]
    assert episodes["first_divergence"] == "draft"
    assert [(line["agent"], line["same"], line["first"]) for line in episodes["lines"]][:2] == [
        ("classify", True, False), ("draft", False, True),
    ]
    text = swept("inspect", "--pair", "before", "after", "--episode", episode)
    lines = text.stdout.splitlines()
    (first,) = [line for line in lines if line.endswith("<- first divergence")]
    assert first.lstrip().startswith("draft ")
    assert any(line.lstrip().startswith("classify ") and " = classify " in line for line in lines)


def test_why_no_agent_is_named(swept: CLI, tmp_path: Path) -> None:
    unpaired = json.loads(swept("diff", "before", "unpaired", "--json").stdout)["attribution"]
    assert (unpaired["available"], unpaired["code"]) == (False, "unpaired")
    text = swept("diff", "before", "unpaired").stdout
    assert "where: no agent is named: the runs were not paired at sweep time" in text
    refused = swept("inspect", "--pair", "before", "unpaired", "--episode", "ticket refund/0")
    assert_clean_error(refused, 1, "different seeds", "not twins")
    usage = swept("inspect", "--pair", "before", "after")
    assert_clean_error(usage, 2, "--pair BEFORE AFTER", "needs --episode")
