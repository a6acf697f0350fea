"""load_trace: a stored trace read back whole, and clear errors for what is not one."""

from __future__ import annotations

import pytest

from proveai import FileExporter, load_trace, regex_match, trace
from proveai.errors import ProveAIError
from tests.proveai.script_kit import read_json
from tests.proveai.store.store_kit import capture


def test_load_trace_round_trips_everything(tmp_path):
    t = capture(tmp_path, checks=[regex_match("lookup", "found")])
    loaded = load_trace(tmp_path / f"{t.trace_id}.json")
    assert loaded.trace_id == t.trace_id
    assert loaded.service_name == "store-test" and loaded.name == "store-test"
    assert loaded.spans == t.spans  # every field, attributes included
    assert loaded.invocation == t.invocation and loaded.invocation["argv"]
    assert loaded.check_results == t.check_results and loaded.outcome == "good"
    assert (loaded.started_ns, loaded.ended_ns) == (t.started_ns, t.ended_ns)
    assert [s.name for s in loaded.roots()] == ["plan"]
    assert loaded.children(loaded.span("plan")) == [loaded.span("lookup")]
    assert loaded.span("plan").version == "v7" and loaded.span("plan").model == "gpt-4o-mini"
    assert loaded.span("lookup").attributes["gen_ai.operation.name"] == "execute_tool"


def test_an_empty_trace_still_records_its_resource(tmp_path):
    with trace("nothing", exporters=[FileExporter(tmp_path)]) as t:
        pass
    loaded = load_trace(tmp_path / f"{t.trace_id}.json")
    assert loaded.trace_id == t.trace_id and loaded.spans == [] and loaded.name == "nothing"
    assert read_json(tmp_path / "manifest.json")[t.trace_id]["agents"] == []


def test_load_trace_errors_are_clear(tmp_path):
    with pytest.raises(ProveAIError, match="no trace file at"):
        load_trace(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ProveAIError, match=r"bad.json is not JSON"):
        load_trace(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(ProveAIError, match="not an OTLP JSON trace"):
        load_trace(tmp_path / "other.json")
