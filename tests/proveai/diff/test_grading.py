"""grade_outputs: the tiers in order for one agent's output, as one Grade."""

from __future__ import annotations

from proveai.diff.grading import grade_outputs
from proveai.diff.judge import JudgeStats
from proveai.diff.verdict import Status, Tier
from proveai.providers import OpenAICompatibleProvider
from tests.proveai.model_server import ModelServer, Reply


def test_an_unjudged_text_mismatch_is_marked_inconclusive(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
    model_server.enqueue(Reply(status=500))
    unjudged = grade_outputs("Ships Monday.", "Leaves on Monday.", judge_model="j", judge_provider=provider)
    assert (unjudged.status, unjudged.tier, unjudged.judged) == (Status.INCONCLUSIVE, Tier.JUDGE, False)
    assert unjudged.confidence == 0.0 and unjudged.rationale.startswith("judge skip: ")
    assert "-Ships Monday." in unjudged.unified  # the one diff, computed by tier 1
    judged = grade_outputs("Ships Monday.", "Leaves on Monday.", judge_model="j", judge_provider=provider)
    assert (judged.status, judged.tier, judged.judged) == (Status.DRIFTED, Tier.JUDGE, True)
    assert judged.confidence == 0.9  # the judge's own
    decided = grade_outputs("a 1", "a 2")
    assert (decided.status, decided.tier, decided.judged) == (Status.REGRESSED, Tier.TIER1, True)


def test_the_judge_gets_the_callers_max_tokens_and_counts_into_its_stats(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
    mine, theirs = JudgeStats(), JudgeStats()
    grade_outputs("Ships Monday.", "Leaves Monday.", judge_model="j", judge_provider=provider,
                  judge_max_tokens=50, judge_stats=mine)
    grade_outputs("Ships Friday.", "Leaves Friday.", judge_model="j", judge_provider=provider,
                  judge_stats=theirs)
    assert [r.body["max_tokens"] for r in model_server.chat_requests()] == [50, 200]
    assert (mine.calls, theirs.calls, mine.malformed) == (1, 1, 0)
