"""One run's agent calls column by column: read from the `agent_calls` column (derived from the
spans as the writer derives it), they are the one-by-one reading of each episode's spans
(`agent_calls`), a damaged row included; trails are equal exactly where every call agrees."""

from __future__ import annotations

import json

import pyarrow as pa

from poisson_prove.comparison.attribution import AgentCall, agent_calls
from poisson_prove.comparison.side_by_side import decoded as _decoded
from poisson_prove.comparison.side_calls import side_calls_of as side_calls_of_calls
from poisson_prove.store.agent_calls import agent_calls_of


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


