"""The store index: manifest and journal, compaction, corruption and rebuilds, many writers at once."""

from __future__ import annotations

import json
import time

from tests.proveai.script_kit import read_json, read_jsonl, trace_files
from tests.proveai.store.store_kit import capture


def test_manifest_is_journaled_and_compacted_and_readable_with_json_load(tmp_path):
    from proveai.store.traces.index import JOURNAL, read_index

    traces = [capture(tmp_path) for _ in range(12)]
    ids = [t.trace_id for t in traces]
    journal_lines = read_jsonl(tmp_path / JOURNAL)
    on_disk = read_json(tmp_path / "manifest.json")
    # every capture is in the manifest or still in the journal, nowhere twice lost
    assert set(on_disk) | {row["trace_id"] for row in journal_lines} == set(ids)
    assert len(on_disk) >= 1
    index = read_index(tmp_path)  # a read folds the journal in
    assert list(index.entries) == ids and index.warnings == []
    assert list(read_json(tmp_path / "manifest.json")) == ids
    assert (tmp_path / JOURNAL).read_bytes() == b""


def test_a_corrupt_manifest_is_reported_and_rebuilt_never_emptied(tmp_path, proveai_cli):
    from proveai.store.traces.index import read_index

    traces = [capture(tmp_path) for _ in range(3)]
    read_index(tmp_path)
    (tmp_path / "manifest.json").write_text('{"' + traces[0].trace_id + '": {"agents": [')  # torn
    result = proveai_cli("status", "--traces", str(tmp_path))
    assert result.returncode == 0, result.stderr
    warning_lines = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warning_lines) == 1 and "manifest.json is corrupt" in warning_lines[0]
    assert "rebuilding the index from the trace files" in warning_lines[0]
    for t in traces:
        assert t.trace_id in result.stdout
    assert set(read_json(tmp_path / "manifest.json")) == {t.trace_id for t in traces}
    kept = list(tmp_path.glob("manifest.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text().startswith('{"')
    again = proveai_cli("status", "--traces", str(tmp_path))
    assert again.returncode == 0 and again.stderr == ""


def test_a_corrupt_journal_line_is_reported_and_the_trace_kept(tmp_path):
    from proveai.store.traces.index import JOURNAL, read_index

    first = capture(tmp_path)
    read_index(tmp_path)
    second = capture(tmp_path)
    with open(tmp_path / JOURNAL, "ab") as handle:
        handle.write(b'{"trace_id": "torn')  # a writer killed mid-line
    index = read_index(tmp_path)
    assert set(index.entries) == {first.trace_id, second.trace_id}
    assert len(index.warnings) == 1 and "manifest.journal.jsonl line" in index.warnings[0]


def test_thirty_processes_capturing_at_once_all_end_up_indexed(py, workdir):
    from proveai.store.traces.index import read_index

    py.write(
        "worker.py",
        """
        import sys, time
        from proveai import FileExporter, monitor, regex_match, trace

        @monitor("step")
        def step(i):
            return f"item {i}"

        go = float(sys.argv[2])
        while time.time() < go:  # start together
            time.sleep(0.002)
        for n in range(int(sys.argv[1])):
            with trace("w", exporters=[FileExporter("store")], checks=[regex_match("step", "item")]) as t:
                step(n)
            print(t.trace_id)
        """,
    )
    import subprocess
    import sys

    from tests.conftest import isolated_env

    go = time.time() + 2.5
    procs = [
        subprocess.Popen(
            [sys.executable, "worker.py", "3", str(go)], cwd=workdir, env=isolated_env(py.home),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(30)
    ]
    printed: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        printed += out.split()
    assert len(printed) == 90 and len(set(printed)) == 90
    store = workdir / "store"
    assert sorted(p.stem for p in trace_files(store)) == sorted(printed)
    composite = [r for r in read_jsonl(store / "outcomes.jsonl") if r["source"] == "composite"]
    assert sorted(r["trace_id"] for r in composite) == sorted(printed)
    index = read_index(store)
    assert sorted(index.entries) == sorted(printed) and index.warnings == []
    assert sorted(read_json(store / "manifest.json")) == sorted(printed)


def test_a_deleted_manifest_is_rebuilt_with_a_warning(tmp_path):
    from proveai.store.traces.index import JOURNAL, read_index

    traces = [capture(tmp_path) for _ in range(2)]
    read_index(tmp_path)
    (tmp_path / "manifest.json").unlink()
    (tmp_path / JOURNAL).unlink()
    index = read_index(tmp_path)
    assert set(index.entries) == {t.trace_id for t in traces}
    missing = f"{tmp_path / 'manifest.json'} is missing; rebuilding the index from the trace files"
    assert index.warnings == [missing]
    assert set(read_json(tmp_path / "manifest.json")) == {t.trace_id for t in traces}


def test_a_capture_into_a_large_store_does_not_rewrite_the_index(tmp_path):
    from proveai.store.traces.index import JOURNAL, read_index

    seed = capture(tmp_path)
    read_index(tmp_path)
    entry = read_json(tmp_path / "manifest.json")[seed.trace_id]
    # a store indexing 3,000 traces (entries only: the index is what a capture could rewrite)
    big = {f"{i:032x}": entry for i in range(3000)} | {seed.trace_id: entry}
    (tmp_path / "manifest.json").write_text(json.dumps(big))
    before = (tmp_path / "manifest.json").stat()
    added = [capture(tmp_path).trace_id for _ in range(20)]
    after = (tmp_path / "manifest.json").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # untouched
    assert [row["trace_id"] for row in read_jsonl(tmp_path / JOURNAL)] == added
    assert list(read_index(tmp_path).entries)[-20:] == added  # and a read folds them in


def test_entries_of_the_wrong_types_or_too_deep_make_the_manifest_rebuilt(tmp_path):
    """A manifest whose entries hold the wrong types (spans, agents, started_ns, timestamp), or
    one nested past what a reader parses, is rebuilt with one warning, as a torn one is; a
    journal line of the wrong types is left out the same way."""
    from proveai.store.traces.index import JOURNAL, read_index
    from proveai.store.traces.reading import list_traces

    traces = [capture(tmp_path) for _ in range(2)]
    read_index(tmp_path)
    manifest = read_json(tmp_path / "manifest.json")
    for entry in manifest.values():
        entry.update(spans=5, agents=7, started_ns="x", timestamp=[1])
    damaged = {
        "types": json.dumps(manifest),
        "deep": "[" * 200_000 + "]" * 200_000,
    }
    for text in damaged.values():
        (tmp_path / "manifest.json").write_text(text)
        listing = list_traces(tmp_path)
        assert [row.trace_id for row in listing.rows] == [t.trace_id for t in traces]
        assert len(listing.warnings) == 1 and "rebuilding" in listing.warnings[0]
        assert list_traces(tmp_path).warnings == ()  # rebuilt once
    with open(tmp_path / JOURNAL, "a") as handle:
        handle.write(json.dumps({"trace_id": "f" * 32, "entry": {"agents": 3}}) + "\n")
    listing = list_traces(tmp_path)
    assert len(listing.rows) == 2 and "manifest.journal.jsonl line 1 is corrupt" in listing.warnings[0]
