"""Outcomes and detections: record_outcome validates and appends, detection.json follows the mapping."""

from __future__ import annotations

import pytest

from proveai import record_outcome, regex_match
from tests.proveai.script_kit import read_json, read_jsonl
from tests.proveai.store.store_kit import capture


def test_record_outcome_validates_and_appends(tmp_path):
    t = capture(tmp_path)
    before = (tmp_path / "outcomes.jsonl").read_bytes()
    with pytest.raises(ValueError, match="label must be one of good, bad, skip"):
        record_outcome(t.trace_id, label="fine", root=tmp_path)
    with pytest.raises(ValueError, match="is not a trace id"):
        record_outcome("abc", label="good", root=tmp_path)
    with pytest.raises(ValueError, match=f"no trace {'0' * 32} in"):
        record_outcome("0" * 32, label="good", root=tmp_path)
    assert (tmp_path / "outcomes.jsonl").read_bytes() == before  # nothing written on bad input
    record_outcome(t.trace_id, label="bad", score=0.1, root=tmp_path)
    rows = read_jsonl(tmp_path / "outcomes.jsonl")
    assert rows[-1]["source"] == "manual" and rows[-1]["label"] == "bad" and rows[-1]["score"] == 0.1


def test_detection_json_follows_the_status_mapping(tmp_path):
    flagged = capture(tmp_path, checks=[regex_match("lookup", "zzz")])
    clean = capture(tmp_path, checks=[regex_match("lookup", "found")])
    suspect = capture(tmp_path)
    got = {
        t.trace_id: read_json(tmp_path / f"{t.trace_id}.detection.json") for t in (flagged, clean, suspect)
    }
    assert got[flagged.trace_id]["status"] == "flagged"
    assert got[flagged.trace_id]["fired"] == [
        {
            "name": "regex_match", "agent": "lookup", "label": "bad",
            "reason": "lookup output does not match /zzz/",
        }
    ]
    assert got[clean.trace_id]["status"] == "clean" and got[clean.trace_id]["fired"] == []
    assert got[suspect.trace_id]["status"] == "suspect" and got[suspect.trace_id]["checks_run"] == 0
    from proveai.narrative.mast import narrate_cohort, render

    assert "flagged" in render(got[flagged.trace_id]) and "does not match" in render(got[flagged.trace_id])
    assert narrate_cohort(got.values()).startswith("3 trace(s): 1 flagged, 1 suspect, 1 clean.")
