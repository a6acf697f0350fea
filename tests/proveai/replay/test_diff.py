"""Tier 1 (text_diff, per-kind checks), tier 2 (real local embeddings), tier 3 (judge over HTTP)."""

from __future__ import annotations

import pytest

from proveai import text_diff
from proveai.cache import ResponseCache
from proveai.diff.grading import grade_outputs
from proveai.diff.judge import llm_judge
from proveai.diff.tier1 import mask_volatile, numbers_of, tier1_for_kind
from proveai.providers import OpenAICompatibleProvider
from proveai.providers.embedding import (
    EmbeddingResult,
    LocalEmbeddingAdapter,
    OpenAICompatibleEmbeddingAdapter,
    cosine_similarity,
)
from tests.proveai.model_server import ModelServer, Reply


def test_json_deep_equal_ignores_key_order_and_reads_json_strings() -> None:
    result = text_diff({"a": 1, "b": [1, 2]}, '{"b": [1, 2], "a": 1}')
    assert (result["equal"], result["kind"]) == (True, "json")
    changed = text_diff({"a": 1}, {"a": 2})
    assert (changed["equal"], changed["kind"]) == (False, "json")
    assert '-  "a": 1' in changed["unified"] and '+  "a": 2' in changed["unified"]


def test_factual_swap_is_numeric_and_formatting_is_not() -> None:
    swap = text_diff("Refund of $1,200 approved.", "Refund of $12,000 approved.")
    assert (swap["equal"], swap["kind"]) == (False, "numeric")
    assert "-Refund of $1,200" in swap["unified"]
    same = text_diff("Total: $1,200.00", "Total:   $1200")
    assert same["kind"] == "text" and not same["equal"]  # different text, same numbers
    assert text_diff("50% off", "50 off")["kind"] == "numeric"  # a unit changed


def test_whitespace_only_difference_is_equal_with_a_diff_anyway() -> None:
    result = text_diff("hello   world\n", " hello world")
    assert (result["equal"], result["kind"]) == (True, "text")
    assert result["unified"].startswith("--- old\n+++ new")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "order 3f2a9c1e-1b2c-4d3e-8f90-123456789abc done",
            "order 0b7e2d11-aaaa-4bbb-8ccc-000000000001 done",
        ),
        ("at 2026-01-31T12:00:00Z", "at 2026-02-01T08:30:15.123+02:00"),
        ("on 2026-01-31", "on 2025-12-24"),
        ("request req_8AbC9x12zz ok", "request req_77QQ11aa00 ok"),
        ("commit deadbeef1234 built", "commit 0badc0ffee99 built"),
        ("at 1732900000000 ms", "at 1732900999999 ms"),
    ],
)
def test_volatile_tokens_are_not_a_factual_swap(old: str, new: str) -> None:
    result = text_diff(old, new)
    assert result["kind"] == "text" and result["volatile_only"] and not result["equal"]
    verdict = grade_outputs(old, new)
    assert (verdict.status, verdict.tier) == ("drifted", 1)


def test_masking_keeps_real_numbers() -> None:
    assert mask_volatile("id 3f2a9c1e-1b2c-4d3e-8f90-123456789abc costs $5") == "id <uuid> costs $5"
    assert numbers_of("gpt-4o costs -5 and $1,200 in 2026-01-01") == numbers_of("gpt-4o costs -5 and $1200")


def test_per_kind_tier1() -> None:
    docs_a = [{"id": "d1", "text": "x"}, {"id": "d2", "text": "y"}]
    docs_b = [{"id": "d2", "text": "changed text"}, {"id": "d1", "text": "x"}]
    assert tier1_for_kind("RETRIEVER", docs_a, docs_b).status == "unchanged"
    lost = tier1_for_kind("RETRIEVER", docs_a, [{"id": "d1"}, {"id": "d9"}])
    assert lost.status == "regressed" and "+d9" in lost.rationale and "-d2" in lost.rationale
    assert tier1_for_kind(
        "TOOL", {"a": 1}, {"a": 1}, name="crm", old_inputs={"q": 1}, new_inputs={"q": 1}
    ).status == ("unchanged")
    args = tier1_for_kind("TOOL", {"a": 1}, {"a": 1}, name="crm", old_inputs={"q": 1}, new_inputs={"q": 2})
    assert args.status == "regressed" and "args" in args.rationale
    assert tier1_for_kind("EMBEDDING", [1.0, 0.0], [0.999, 0.01]).status == "unchanged"
    assert tier1_for_kind("EMBEDDING", [1.0, 0.0], [0.0, 1.0]).status == "regressed"
    assert tier1_for_kind("PARSER", '{"x": [1]}', {"x": [1]}).status == "unchanged"
    assert tier1_for_kind("PARSER", {"x": 1}, {"x": 2}).status == "regressed"
    assert tier1_for_kind("CHAT_MODEL", "a", "b") is None


def test_cosine_similarity_refuses_cross_model_vectors() -> None:
    a = EmbeddingResult((1.0, 0.0), "m1", "1")
    assert cosine_similarity(a, EmbeddingResult((1.0, 0.0), "m1", "1")) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="different models"):
        cosine_similarity(a, EmbeddingResult((1.0, 0.0), "m2", "1"))
    with pytest.raises(ValueError, match="different lengths"):
        cosine_similarity([1.0], [1.0, 0.0])


@pytest.fixture(scope="module")
def local_embedder() -> LocalEmbeddingAdapter:
    return LocalEmbeddingAdapter()


def test_local_embedder_is_the_real_model_offline(local_embedder: LocalEmbeddingAdapter, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cat = local_embedder.embed("the cat sat on the mat")
    feline = local_embedder.embed("a cat was sitting on the mat")
    market = local_embedder.embed("quarterly bond yields fell sharply")
    assert len(cat.vector) == 384 and cat.model == "all-MiniLM-L6-v2"
    assert cosine_similarity(cat, feline) > 0.7 > 0.3 > cosine_similarity(cat, market)
    assert cosine_similarity(cat, local_embedder.embed("the cat sat on the mat")) == pytest.approx(1.0)


def test_tier2_decides_obvious_divergence_without_the_judge(
    local_embedder: LocalEmbeddingAdapter, model_server: ModelServer
) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    verdict = grade_outputs(
        "Your parcel ships tomorrow by courier.",
        "Quarterly bond yields fell sharply.",
        embedder=local_embedder,
        judge_model="j",
        judge_provider=provider,
        cache=ResponseCache(enabled=False),
    )
    assert (verdict.status, verdict.tier) == ("regressed", 2) and "cosine" in verdict.rationale
    assert model_server.count() == 0
    close = grade_outputs(
        "Your parcel ships tomorrow.",
        "Your parcel will ship tomorrow.",
        embedder=local_embedder,
        judge_model="j",
        judge_provider=provider,
        cache=ResponseCache(enabled=False),
    )
    assert close.tier == 3 and model_server.count() == 1  # the uncertain band goes to the judge


def test_openai_compatible_embeddings_over_http(model_server: ModelServer) -> None:
    embedder = OpenAICompatibleEmbeddingAdapter(base_url=model_server.openai_url, model="nomic-embed-text")
    a, b = embedder.embed_many(["refund the order", "refund the order"])
    assert a == b and a.model == "nomic-embed-text" and len(a.vector) == 64
    assert model_server.requests[0].body == {"model": "nomic-embed-text", "input": ["refund the order"]}
    local = EmbeddingResult(tuple([0.1] * 64), "all-MiniLM-L6-v2", "0.1.0")
    with pytest.raises(ValueError):
        cosine_similarity(a, local)


def test_judge_parses_fenced_json_and_is_cached(model_server: ModelServer, tmp_path) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    cache = ResponseCache(root=tmp_path / "c")
    messages = [{"role": "user", "content": "Summarise"}]
    first = llm_judge(messages, "old text", "new text", model="judge-1", provider=provider, cache=cache)
    assert first == {
        "verdict": "equivalent",
        "confidence": 0.9,
        "rationale": "the outputs say the same thing",
    }
    again = llm_judge(messages, "old text", "new text", model="judge-1", provider=provider, cache=cache)
    assert again == first and model_server.count() == 1
    body = model_server.requests[0].body
    assert body["model"] == "judge-1" and body["temperature"] == 0
    assert "OLD OUTPUT:\nold text" in body["messages"][1]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="I think they are about the same."),
        Reply(text='{"verdict": "maybe", "confidence": 1}'),
        Reply(status=500),
        Reply(status=200, body={"choices": []}),
    ],
)
def test_judge_degrades_to_skip(model_server: ModelServer, reply: Reply) -> None:
    model_server.enqueue(*[reply] * 4)
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
    result = llm_judge([], "a", "b", model="j", provider=provider, cache=ResponseCache(enabled=False))
    assert result["verdict"] == "skip" and result["confidence"] == 0.0
    assert result["rationale"].startswith("judge skip: ")


def test_an_unjudged_text_mismatch_is_marked_inconclusive(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url, max_retries=0)
    model_server.enqueue(Reply(status=500))
    unjudged = grade_outputs("Ships Monday.", "Leaves on Monday.", judge_model="j", judge_provider=provider)
    assert (unjudged.status, unjudged.tier, unjudged.inconclusive) == ("inconclusive", 3, True)
    assert unjudged.confidence == 0.0 and unjudged.to_dict()["inconclusive"] is True
    judged = grade_outputs("Ships Monday.", "Leaves on Monday.", judge_model="j", judge_provider=provider)
    assert judged.tier == 3 and judged.inconclusive is False
    assert grade_outputs("a 1", "a 2").inconclusive is False  # decided at tier 1


def test_judge_without_credentials_says_what_to_set(monkeypatch) -> None:
    result = llm_judge([], "a", "b", cache=ResponseCache(enabled=False))
    assert result == {
        "verdict": "skip",
        "confidence": 0.0,
        "rationale": "judge skip: ANTHROPIC_API_KEY not set",
    }
    monkeypatch.setenv("PROVEAI_JUDGE_MODEL", "llama-unknown")
    result = llm_judge([], "a", "b", cache=ResponseCache(enabled=False))
    assert "no provider for judge model 'llama-unknown'" in result["rationale"]


def test_judge_model_env_is_read_at_call_time(model_server: ModelServer, monkeypatch) -> None:
    from proveai.providers import reset_providers

    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "acme-*")
    monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", model_server.openai_url)
    reset_providers()
    monkeypatch.setenv("PROVEAI_JUDGE_MODEL", "acme-judge")
    result = llm_judge([], "a", "b", cache=ResponseCache(enabled=False))
    assert result["verdict"] == "equivalent" and model_server.requests[0].body["model"] == "acme-judge"


def test_a_malformed_judge_reply_is_not_served_from_cache_again(model_server: ModelServer, tmp_path) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    cache = ResponseCache(root=tmp_path / "c")
    # a malformed reply is asked again once (PROVEAI_JUDGE_RETRIES, default 1), then skipped
    model_server.enqueue(Reply(text="no json here"), Reply(text="still no json"))
    skipped = llm_judge([], "a", "b", model="j", provider=provider, cache=cache)
    assert skipped["verdict"] == "skip" and "2 attempt(s), max_tokens 200" in skipped["rationale"]
    assert [r.body["max_tokens"] for r in model_server.requests] == [200, 200]
    assert llm_judge([], "a", "b", model="j", provider=provider, cache=cache)["verdict"] == "equivalent"
    assert model_server.count() == 3
    model_server.enqueue(Reply(text="rambling"))
    assert llm_judge([], "a", "c", model="j", provider=provider, cache=cache)["verdict"] == "equivalent"
    assert model_server.count() == 5  # one malformed reply, one retry that parsed
