"""Reading the twins for the attribution: an even sample beyond the cap (the same every time),
and a run without agent spans told apart without a JSON parse. The end-to-end reading (a swept
pipeline, every row attributed) is tests/poisson_prove/examples/test_mock_pipeline.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from poisson_prove.comparison.attribution import AgentCall, first_divergence, first_divergence_of
from poisson_prove.comparison.twins import _even, has_agent_spans, read_calls, read_spans
from poisson_prove.store.table import tuples_to_table


def test_an_even_sample_beyond_the_cap() -> None:
    rows = np.arange(10, 30)
    assert _even(rows, 50) is rows
    sample = _even(rows, 5)
    assert sample.tolist() == [10, 15, 20, 24, 29] and _even(rows, 5).tolist() == sample.tolist()


def test_agent_spans_are_told_by_a_text_search_and_rows_read_by_position(tmp_path: Path) -> None:
    monitor = '[{"name":"draft","source":"monitor","attributes":{}}]'
    files = []
    for n, spans in enumerate(([None, '[{"name":"s","source":"step"}]'], [None, monitor, None])):
        files.append(tmp_path / f"batch-{n}.parquet")
        pq.write_table(pa.table({"spans": pa.array(spans, pa.string())}), files[-1])
    without = SimpleNamespace(batch_files=lambda: files[:1])
    with_agents = SimpleNamespace(batch_files=lambda: files)
    assert not has_agent_spans(without) and has_agent_spans(with_agents)  # type: ignore[arg-type]
    assert read_spans(with_agents, [3, 0]) == {0: None, 3: monitor}  # type: ignore[arg-type]


def test_the_first_divergence_of_keys_is_the_first_divergence_of_calls() -> None:
    def calls(*keys: tuple[str, str | None, str]) -> tuple[AgentCall, ...]:
        seen: dict[str, int] = {}
        out = []
        for agent, output, status in keys:
            out.append(AgentCall(agent, seen.get(agent, 0), output, status))
            seen[agent] = seen.get(agent, 0) + 1
        return tuple(out)

    cases = [
        ([("a", "1", "ok"), ("b", "2", "ok")], [("a", "1", "ok"), ("b", "3", "ok")]),
        ([("a", "1", "ok"), ("a", "2", "ok")], [("a", "1", "ok")]),
        ([("a", "1", "ok")], [("a", "1", "ok"), ("c", "9", "ok")]),
        ([("a", None, "error")], [("a", None, "ok")]),
        ([("b", "2", "ok"), ("a", "1", "ok")], [("a", "1", "ok"), ("b", "2", "ok")]),
        ([], []),
    ]
    for before, after in cases:
        assert first_divergence_of(before, after) == first_divergence(calls(*before), calls(*after))
    assert [first_divergence_of(b, a) for b, a in cases] == ["b", "a", "c", "a", None, None]


def test_agent_spans_are_found_in_spaced_json_too(tmp_path: Path) -> None:
    path = tmp_path / "batch-0.parquet"
    spaced = '[{"name": "draft", "source": "monitor"}]'  # json.dumps' own separators
    pq.write_table(pa.table({"spans": pa.array([spaced], pa.string())}), path)
    assert has_agent_spans(SimpleNamespace(batch_files=lambda: [path]))  # type: ignore[arg-type]


def test_a_file_with_the_column_is_probed_and_read_by_it(tmp_path: Path) -> None:
    monitor = '[{"name":"draft","source":"monitor","attributes":{"proveai.output_hash":"h"}}]'
    row = ("{}", "{}", 0, 7, "ok", 1.0, 2.0, None, "{}", None, None, 1.7e9, 0.1, None)
    files = []
    for n, spans in enumerate(([None, '[{"name":"s","source":"step"}]'], [None, monitor, None])):
        table = tuples_to_table("r", [(*row[:2], r, *row[3:13], s) for r, s in enumerate(spans)])
        files.append(tmp_path / f"batch-{n}.parquet")
        pq.write_table(table, files[-1], row_group_size=2)
    # the spans emptied: only the column can tell the second file holds an agent call
    for path in files:
        pq.write_table(pq.read_table(path).drop_columns(["spans"]).append_column(
            "spans", pa.nulls(pq.read_metadata(path).num_rows, pa.string())), path, row_group_size=2)
    without = SimpleNamespace(batch_files=lambda: files[:1])
    with_agents = SimpleNamespace(batch_files=lambda: files)
    assert not has_agent_spans(without) and has_agent_spans(with_agents)  # type: ignore[arg-type]
    wanted, calls = read_calls(with_agents, [3, 0, 3])  # type: ignore[arg-type]
    assert wanted.tolist() == [0, 3]
    assert [[c.agent for c in calls.calls(e)] for e in range(calls.episodes)] == [[], ["draft"]]
    assert calls.keys(1) == [("draft", "h", "ok")]
