"""Reading the twins for the attribution: an even sample beyond the cap (the same every time),
and a run without agent spans told apart without a JSON parse. The end-to-end reading (a swept
pipeline, every row attributed) is tests/poisson_prove/examples/test_mock_pipeline.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from poisson_prove.comparison.attribution import AgentCall, agent_calls, first_divergence, first_divergence_of
from poisson_prove.comparison.twins import (
    _decoded,
    _even,
    has_agent_spans,
    read_spans,
    side_by_side,
    side_calls_of,
)


def test_an_even_sample_beyond_the_cap() -> None:
    rows = np.arange(10, 30)
    assert _even(rows, 50) is rows
    sample = _even(rows, 5)
    assert sample.tolist() == [10, 15, 20, 24, 29] and _even(rows, 5).tolist() == sample.tolist()


def test_damaged_spans_read_as_no_agent_calls() -> None:
    assert _decoded("not json") == [] and _decoded(None) == [] and _decoded('{"a": 1}') == []
    assert _decoded([{"name": "x"}]) == [{"name": "x"}]


def test_calls_only_one_twin_made_are_lines_of_their_own() -> None:
    before = (AgentCall("a", 0, "1", "ok"),)
    after = (AgentCall("a", 0, "1", "ok"), AgentCall("b", 0, "2", "ok"))
    lines = side_by_side(before, after, "b")
    assert [(x.agent, x.same, x.first, x.before is None) for x in lines] == [
        ("a", True, False, False), ("b", False, True, True),
    ]


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


def _span(
    agent: str, output: str | None, *, source: str = "monitor", status: str = "ok", **attrs: str
) -> dict:
    attributes = {"gen_ai.agent.name": agent, "proveai.prompt_hash": f"p-{agent}", **attrs}
    if output is not None:
        attributes["proveai.output_hash"] = output
    return {"name": agent, "source": source, "status": status, "attributes": attributes, "parent": None}


EPISODES = [
    [_span("classify", "h1"), _span("draft", "h2", **{"proveai.check.json_valid": "good"}),
     _span("draft", None, status="error", **{"proveai.check.json_valid": "bad"})],
    # a step, an otel span (it names an agent but is no agent call), quotes in names
    [{"name": "turn", "source": "step"}, _span("qa_check", "h3", source="otel"),
     _span('qa "check" <x>', "h4", **{'proveai.check.tone "warm"': "bad", "proveai.inputs": "[1, 2]"})],
    [],
]


def test_the_columnar_reading_is_the_one_by_one_reading() -> None:
    texts = [json.dumps(e, separators=(",", ":")) for e in EPISODES] + [None, ""]
    one_by_one = [agent_calls(_decoded(t)) for t in texts]
    # as written, then with a damaged row (every row read by itself then)
    for array in (pa.array(texts, pa.string()), pa.array([*texts, "not json"], pa.string())):
        side = side_calls_of(array)
        expected = one_by_one + ([()] if len(array) > len(texts) else [])
        assert len(side.offsets) - 1 == len(expected)
        for episode, calls in enumerate(expected):
            assert side.calls(episode) == tuple(
                AgentCall(c.agent, c.occurrence, c.output_hash, c.status) for c in calls
            )
            assert side.keys(episode) == [(c.agent, c.output_hash, c.status) for c in calls]
            for agent, check in [("draft", "json_valid"), ('qa "check" <x>', 'tone "warm"')]:
                labels = [c.checks.get(check) for c in calls if c.agent == agent]
                want = 1 if "bad" in labels else 0 if "good" in labels else -1
                assert side.labels(agent, check)[episode] == want
        values = side.changed_values()
        assert values["draft"]["prompt"] == {"p-draft"} and values["draft"]["code"] == {None}
        assert "qa_check" not in values
        assert side.labels('qa "check" <x>', 'tone "warm"')[1] == 1
        # equal trails exactly where every call agrees: episodes 3 and 4 (null, "") and 2 ([])
        trails = [side.trail(e) for e in range(len(expected))]
        assert trails[2] == trails[3] == trails[4] == "" and len(set(trails[:3])) == 3
        fallback = side_calls_of(pa.array([texts[0], "not json"], pa.string()))
        assert fallback.trail(0) == side.trail(0)  # the one-by-one reading joins them the same way


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
