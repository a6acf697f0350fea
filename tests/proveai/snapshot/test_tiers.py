"""snapshot/tiers.py: the grader verify uses asks the judge over HTTP with its own max_tokens and
counts the judge's requests in its own JudgeStats, so two verifies at once never share counts."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from proveai.diff.verdict import Status, Tier
from proveai.providers import OpenAICompatibleProvider
from proveai.snapshot.model import AgentDefinition, ExpectedIO
from proveai.snapshot.tiers import TierGrader
from tests.proveai.model_server import JUDGE_MARKER, ModelServer

AGENT = AgentDefinition("draft", model="m", prompt="Draft a reply.")


def io(output: str) -> ExpectedIO:
    return ExpectedIO(inputs={"ticket": "t"}, output=output)


def _grade_all(grader: TierGrader, pairs: list[tuple[str, str]]) -> list[Status]:
    return [grader(io(old), io(new), AGENT).status for old, new in pairs]


def test_two_graders_on_two_threads_keep_their_own_bound_and_counts(model_server: ModelServer) -> None:
    def grader(max_tokens: int) -> TierGrader:
        provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
        return TierGrader(judge_model="j", judge_provider=provider, max_tokens=max_tokens)

    first, second = grader(50), grader(80)
    first_pairs = [(f"The parcel ships on day {w}.", f"Your parcel leaves on day {w}.") for w in "abc"]
    second_pairs = [("Refunds take a week.", "A refund takes about a week.")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        statuses = list(pool.map(_grade_all, [first, second], [first_pairs, second_pairs]))
    assert statuses == [[Status.DRIFTED] * 3, [Status.DRIFTED]]  # the server's judge: equivalent
    judged = [r for r in model_server.chat_requests() if r.system.startswith(JUDGE_MARKER)]
    assert sorted(r.body["max_tokens"] for r in judged) == [50, 50, 50, 80]
    assert (first.judge_stats.calls, second.judge_stats.calls) == (3, 1)
    assert first.judge_stats.malformed == second.judge_stats.malformed == 0


def test_a_judged_grade_keeps_its_tier_confidence_and_diff(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
    grader = TierGrader(judge_model="j", judge_provider=provider)
    grade = grader(io("Ships Monday."), io("Leaves Monday."), AGENT)
    assert (grade.status, grade.tier, grade.judged) == (Status.DRIFTED, Tier.JUDGE, True)
    assert grade.confidence == 0.9  # the judge's own
    assert grade.rationale == "judge: the outputs say the same thing"
    assert "-Ships Monday." in grade.unified and "+Leaves Monday." in grade.unified
    numbers = grader(io("Refund $40."), io("Refund $400."), AGENT)
    assert (numbers.status, numbers.tier) == (Status.REGRESSED, Tier.TIER1)
    assert numbers.rationale.startswith("tier 1: numbers changed")
