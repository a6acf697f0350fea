"""Reading a store: iter_traces filters with manual outcomes, and a folder that is not a store."""

from __future__ import annotations

import pytest

from proveai import iter_traces, record_outcome, regex_match
from tests.proveai.store.store_kit import capture


def test_iter_traces_filters_and_manual_outcomes(tmp_path):
    good = capture(tmp_path, checks=[regex_match("lookup", "found")])
    bad = capture(tmp_path, checks=[regex_match("lookup", "nothing like this")])
    plain = capture(tmp_path)
    ids = lambda f: [t.trace_id for t in iter_traces(tmp_path, filter=f)]  # noqa: E731
    assert ids(None) == [good.trace_id, bad.trace_id, plain.trace_id]  # capture order
    assert ids({"outcome": "good"}) == [good.trace_id]
    assert ids({"outcome": "bad", "version": "v7", "agent": "lookup"}) == [bad.trace_id]
    assert ids({"outcome": "good", "version": "v8"}) == []
    assert ids({"agent": "nobody"}) == []
    assert ids({"detection": "suspect"}) == [plain.trace_id]
    assert ids({"since": "1h"}) == [good.trace_id, bad.trace_id, plain.trace_id]
    everything = [good.trace_id, bad.trace_id, plain.trace_id]
    assert ids(lambda t: t.span("lookup").output == "found refund") == everything
    record_outcome(bad.trace_id, label="good", reason="user thumbs-up", root=tmp_path)
    assert ids({"outcome": "good"}) == [good.trace_id, bad.trace_id]
    assert [t.outcome for t in iter_traces(tmp_path, filter={"outcome": "good"})] == ["good", "good"]
    with pytest.raises(ValueError, match="unknown filter key 'status'; valid keys: outcome, version, agent"):
        iter_traces(tmp_path, filter={"status": "good"})
    with pytest.raises(ValueError, match="outcome must be one of good, bad, skip"):
        iter_traces(tmp_path, filter={"outcome": "great"})


def test_reading_a_folder_that_is_not_a_store_writes_nothing(tmp_path, proveai_cli):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    result = proveai_cli("status", "--traces", str(folder))
    assert result.returncode == 0 and result.stdout == f"no traces yet in {folder}\n"
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_a_trace_store_that_is_a_file_is_one_input_error(tmp_path, proveai_cli):
    """$PROVEAI_TRACES_DIR=/dev/null (or any file) is exit 2 naming the variable, as --traces is."""
    env = {"PROVEAI_TRACES_DIR": "/dev/null"}
    for verb in ("status", "list"):
        result = proveai_cli(verb, env=env)
        assert result.returncode == 2, result.stderr
        assert result.stderr.splitlines()[0] == (
            "error: no trace store at /dev/null ($PROVEAI_TRACES_DIR): it is a file, not a folder"
        )
        assert "Traceback" not in result.stderr and result.stdout == ""
