"""grade_outputs: the tiers in order for one agent's output."""

from __future__ import annotations

from proveai.diff.grading import grade_outputs
from proveai.providers import OpenAICompatibleProvider
from tests.proveai.model_server import ModelServer, Reply


def test_an_unjudged_text_mismatch_is_marked_inconclusive(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
    model_server.enqueue(Reply(status=500))
    unjudged = grade_outputs("Ships Monday.", "Leaves on Monday.", judge_model="j", judge_provider=provider)
    assert (unjudged.status, unjudged.tier, unjudged.inconclusive) == ("inconclusive", 3, True)
    assert unjudged.confidence == 0.0 and unjudged.to_dict()["inconclusive"] is True
    judged = grade_outputs("Ships Monday.", "Leaves on Monday.", judge_model="j", judge_provider=provider)
    assert judged.tier == 3 and judged.inconclusive is False
    assert grade_outputs("a 1", "a 2").inconclusive is False  # decided at tier 1
