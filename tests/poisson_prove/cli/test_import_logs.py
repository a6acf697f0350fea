"""`poisson-prove import` (cli/import_logs.py), run for real on lm-eval samples files written
here: what it says it stored (lines, or one JSON document), pairing, importing twice, usage.
How each tool's logs are read is the importers' (tests/poisson_prove/importers)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CLI, assert_clean_error

NEXT_FIRST = "next: import the logs after your change the same way, then: poisson-prove diff\n"


def samples(folder: Path, stamp: str, correct: set[int], docs: range = range(40)) -> Path:
    """One lm-eval `--log_samples` file of task tiny_mc: doc i scored acc 1 when i is in `correct`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_tiny_mc_{stamp}.jsonl"
    lines = [
        json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float(i in correct)})
        for i in docs
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def stored(workdir: Path, run_id: str) -> dict:
    return json.loads((workdir / "prove-runs" / run_id / "manifest.json").read_text())


def test_an_import_says_what_it_stored_and_what_to_do_next(prove: CLI, workdir: Path) -> None:
    samples(workdir / "before", "2026-01-01T10-00-00.000", set(range(0, 40, 2)))
    first = prove("import", "lm-eval", "before", "--name", "baseline")
    assert first.stdout == (
        'imported 1 log as run "baseline": 40 episodes (0 errored) of 40 samples in 1 group\n' + NEXT_FIRST
    )
    assert first.stderr == ""
    assert first.returncode == 0

    samples(workdir / "after", "2026-01-02T10-00-00.000", set(range(0, 20)), docs=range(0, 20))
    samples(workdir / "after", "2026-01-02T11-00-00.000", set(range(20, 40)), docs=range(20, 40))
    second = prove("import", "lm-eval", "after", "--name", "changed")
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [
        'imported 2 logs as run "changed": 40 episodes (0 errored) of 40 samples in 1 group',
        'paired with "baseline" on doc_id, where doc_hash agrees',
        'next: poisson-prove diff "baseline" "changed"',
    ]

    again = prove("import", "lm-eval", "before")
    assert again.stdout == 'already imported: these logs are run "baseline"; nothing written\n'
    assert (again.stderr, again.returncode) == ("", 0)
    assert len([p for p in (workdir / "prove-runs").iterdir() if p.is_dir()]) == 2


def test_json_is_one_document_of_what_was_stored(prove: CLI, workdir: Path) -> None:
    log = samples(workdir / "out", "2026-01-01T10-00-00.000", {1, 2, 3})
    result = prove("import", "lm-eval", "out", "--json")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.endswith("}\n") and result.stdout.count("\n}\n") == 1
    document = json.loads(result.stdout)
    manifest = stored(workdir, document["run_id"])
    assert document == {
        "schema": "poisson-prove.import/1",
        "run_id": manifest["run_id"],
        "name": manifest["name"],
        "created": True,
        "status": "complete",
        "episodes": 40,
        "errored": 0,
        "conditions": 40,
        "groups": 1,
        "cases": 40,
        "cancelled": 0,
        "unfinished": [],
        "replaced": None,
        "paired_with": None,
        "files": [str(Path("out") / log.name)],
    }
    again = json.loads(prove("import", "lm-eval", str(log), "--json").stdout)
    assert (again["created"], again["run_id"], again["files"]) == (False, document["run_id"], [str(log)])


def test_the_tool_and_its_options_are_checked_before_anything_is_read(prove: CLI, workdir: Path) -> None:
    no_tool = prove("import")
    assert no_tool.returncode == 2 and no_tool.stdout == ""
    assert "TOOL" in no_tool.stderr and "Traceback" not in no_tool.stderr
    bad_t = prove("import", "inspect", "x.eval", "--t", "words")
    assert bad_t.returncode == 2 and "invalid choice: 'words'" in bad_t.stderr
    samples(workdir / "out", "2026-01-01T10-00-00.000", {1})
    unknown_metric = prove("import", "lm-eval", "out", "--metric", "f1")
    assert_clean_error(unknown_metric, 2, 'has no metric "f1" (it has acc)', "--metric acc")
    assert not (workdir / "prove-runs").exists() or not any((workdir / "prove-runs").iterdir())
