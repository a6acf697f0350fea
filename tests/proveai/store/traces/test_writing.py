"""Writing one trace into a traces folder: its four files read back with plain json, in the
OTLP form an independent reader expects, and what a capture killed mid-write leaves is
cleared by the next index write of the folder."""

from __future__ import annotations

import json
from pathlib import Path

from proveai import regex_match
from proveai.store.traces.index import JOURNAL, read_index
from proveai.store.traces.writing import write_trace
from tests.proveai.store.store_kit import capture, killed_writer_temp


def test_a_trace_is_written_as_its_file_rows_detection_and_index_line(tmp_path: Path) -> None:
    live = capture(tmp_path / "first", checks=[regex_match("lookup", "found")])
    root = tmp_path / "store"
    path = write_trace(root, live)
    assert path == root / f"{live.trace_id}.json"
    raw = path.read_bytes()
    assert raw.isascii() and raw.endswith(b"}\n")  # one compact line, ASCII escapes
    document = json.loads(raw)
    spans = [s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert {s["name"] for s in spans} == {"invoke_agent plan", "execute_tool lookup"}
    assert {s["traceId"] for s in spans} == {live.trace_id}
    rows = [json.loads(line) for line in (root / "outcomes.jsonl").read_text().splitlines()]
    assert [(r["check_name"], r["source"]) for r in rows] == [
        ("regex_match", "check"), ("composite", "composite"),
    ]
    detection = json.loads((root / f"{live.trace_id}.detection.json").read_text())
    assert detection["status"] == "clean" and detection["trace_id"] == live.trace_id
    # the first capture of a store is compacted at once: its index line is in manifest.json
    assert (root / JOURNAL).read_text() == ""
    assert list(json.loads((root / "manifest.json").read_text())) == [live.trace_id]
    assert list(read_index(root).entries) == [live.trace_id]
    assert sorted(p.name for p in root.iterdir()) == sorted(
        [path.name, f"{live.trace_id}.detection.json", "outcomes.jsonl", JOURNAL, "manifest.json", ".lock"]
    )


def test_what_a_killed_capture_left_goes_with_the_next_index_write(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "store"
    first = capture(root)
    left = killed_writer_temp(root / "0123456789abcdef0123456789abcdef.json", home)
    assert read_index(root).entries.keys() == {first.trace_id}  # a temporary file is no trace
    assert left.exists()  # that read had nothing to write
    second = capture(root)  # the journal outgrew half the manifest: compacted, manifest.json written
    assert not left.exists()
    assert set(read_index(root).entries) == {first.trace_id, second.trace_id}
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
