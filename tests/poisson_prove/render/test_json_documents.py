"""Every `--json` document `poisson-prove` prints is written one way (render.json.dumps): the
printed text is exactly its content written that way (indented by 2, non-ASCII characters as
themselves, one newline at the end) under its verb's schema id. Each verb runs for real on a
store that a real sweep and a real import wrote; the documents are read back with `json`."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.render.json import SCHEMAS, dumps
from tests.conftest import CLI
from tests.poisson_prove.helpers import SEEDED_TARGET, small_spec, write

NAME = "déjà vu ✓"  # escaped as \\u00e9 by a writer that keeps to ASCII


def _document(prove: CLI, *argv: str, code: int = 0) -> dict:
    result = prove(*argv, "--json")
    assert result.returncode == code, result.stderr
    document = json.loads(result.stdout)
    assert result.stdout == dumps(document), argv  # the one format, to the byte
    return document


def _lm_eval_samples(folder: Path) -> Path:
    """A samples file as lm_eval --log_samples writes it (the fields the importer reads)."""
    folder.mkdir()
    path = folder / "samples_tiny_2024-05-01T10-00-00.000000.jsonl"
    records = [{"doc_id": i, "doc_hash": f"h{i}", "metrics": ["acc"], "acc": i % 3 == 0} for i in range(12)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


def test_every_verb_writes_its_document_the_one_way(prove: CLI, workdir: Path) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=10)
    swept = _document(prove, "sweep", "--yes", "--max-mde", "1", "--name", NAME)
    assert swept["schema"] == SCHEMAS["sweep"] and swept["run"]["name"] == NAME
    _document(prove, "sweep", "--yes", "--max-mde", "1", "--name", "after", "--pair-with", NAME)

    imported = _document(prove, "import", "lm-eval", str(_lm_eval_samples(workdir / "out")), "--name", "lm ✓")
    assert imported["schema"] == SCHEMAS["import"] and imported["name"] == "lm ✓"
    assert (imported["episodes"], imported["created"]) == (12, True)

    listed = _document(prove, "runs")
    assert listed["schema"] == SCHEMAS["runs"]
    assert [run["name"] for run in listed["runs"]] == [NAME, "after", "lm ✓"]

    compared = _document(prove, "diff", NAME, "after")
    assert (compared["schema"], compared["command"]) == (SCHEMAS["diff"], "diff")
    # 10 episodes a condition cannot show a rise: inconclusive, exit 5, and still the document
    checked = _document(prove, "check", NAME, "after", "--max-mde", "0.2", code=5)
    assert (checked["schema"], checked["command"], checked["exit_code"]) == (SCHEMAS["diff"], "check", 5)
    inspected = _document(prove, "inspect", NAME)
    assert inspected["schema"] == SCHEMAS["inspect"]
