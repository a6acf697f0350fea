"""One run's agent calls column by column: read from the `agent_calls` column (derived from the
spans as the writer derives it), they are the one-by-one reading of each episode's spans
(`agent_calls`), a damaged row included; trails are equal exactly where every call agrees."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from poisson_prove.comparison.attribution import AgentCall, agent_calls, first_divergence_of
from poisson_prove.comparison.side_calls import Vocabulary, first_divergences
from poisson_prove.comparison.side_calls import side_calls_of as side_calls_of_calls
from poisson_prove.store.agent_calls import agent_calls_of
from poisson_prove.store.agent_calls import span_entries as _decoded


def side_calls_of(texts: pa.Array):  # type: ignore[no-untyped-def]
    """The calls as the attribution reads them: the agent_calls column derived from the texts."""
    return side_calls_of_calls(agent_calls_of(texts))


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




def test_the_first_divergences_of_many_pairs_at_once_are_those_of_each_pair() -> None:
    """`first_divergences` (NumPy over every pair) is `first_divergence_of` pair by pair: twins
    of the same calls, of calls differing in output or status, of calls missing on either side,
    of repeated agents, of agents in another order, of none; read as strings and as Parquet
    dictionaries (the store's reading), the two sides sharing one vocabulary."""
    rng = np.random.default_rng(7)
    agents = ["classify", "draft", "qa_check", "draft"]

    def episode() -> list[dict]:
        calls = [c for c in agents if rng.random() < 0.85]
        if rng.random() < 0.1:
            calls = calls[::-1]
        return [
            _span(c, None if rng.random() < 0.1 else f"h{rng.integers(3)}",
                  status="error" if rng.random() < 0.1 else "ok")
            for c in calls
        ]

    before = [episode() for _ in range(400)]
    after = [e if rng.random() < 0.4 else episode() for e in before]

    def arrays(episodes: list[list[dict]]) -> list[pa.Array]:
        texts = pa.array([json.dumps(e, separators=(",", ":")) if e else None for e in episodes], pa.string())
        calls = agent_calls_of(texts)
        sink = pa.BufferOutputStream()
        pq.write_table(pa.table({"agent_calls": calls}), sink, row_group_size=150)
        leaves = [f"agent_calls.list.element.{n}" for n in ("agent", "status", "output_hash")]
        read = pq.read_table(pa.BufferReader(sink.getvalue()), read_dictionary=leaves).column(0)
        assert read.num_chunks > 1 and pa.types.is_dictionary(read.type.value_type.field("agent").type)
        return [calls, read]

    at_b = rng.permutation(400)
    at_a = at_b.copy()
    for calls_b, calls_a in zip(arrays(before), arrays(after), strict=True):
        vocabulary = Vocabulary()
        side_b = side_calls_of_calls(calls_b, vocabulary=vocabulary)
        side_a = side_calls_of_calls(calls_a, vocabulary=vocabulary)
        pairs = zip(at_b, at_a, strict=True)
        expected = [first_divergence_of(side_b.keys(b), side_a.keys(a)) for b, a in pairs]
        assert first_divergences(side_b, at_b, side_a, at_a) == expected
        assert {*expected} == {None, "classify", "draft", "qa_check"}
        assert first_divergences(side_b, at_b[:0], side_a, at_a[:0]) == []
        # the rows wanted only, read from the parts (row groups) that hold them
        rows = np.sort(rng.choice(400, 50, replace=False))
        part = side_calls_of_calls(calls_b, rows, Vocabulary())
        assert [part.keys(n) for n in range(50)] == [side_b.keys(int(r)) for r in rows]
