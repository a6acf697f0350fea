"""Embedders: the real local MiniLM offline, an OpenAI-compatible /embeddings over HTTP, cosine similarity."""

from __future__ import annotations

import pytest

from proveai.providers.embedding import (
    EmbeddingResult,
    LocalEmbeddingAdapter,
    OpenAICompatibleEmbeddingAdapter,
    cosine_similarity,
)
from tests.proveai.model_server import ModelServer


def test_cosine_similarity_refuses_cross_model_vectors() -> None:
    a = EmbeddingResult((1.0, 0.0), "m1", "1")
    assert cosine_similarity(a, EmbeddingResult((1.0, 0.0), "m1", "1")) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="different models"):
        cosine_similarity(a, EmbeddingResult((1.0, 0.0), "m2", "1"))
    with pytest.raises(ValueError, match="different lengths"):
        cosine_similarity([1.0], [1.0, 0.0])


def test_local_embedder_is_the_real_model_offline(local_embedder: LocalEmbeddingAdapter, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cat = local_embedder.embed("the cat sat on the mat")
    feline = local_embedder.embed("a cat was sitting on the mat")
    market = local_embedder.embed("quarterly bond yields fell sharply")
    assert len(cat.vector) == 384 and cat.model == "all-MiniLM-L6-v2"
    assert cosine_similarity(cat, feline) > 0.7 > 0.3 > cosine_similarity(cat, market)
    assert cosine_similarity(cat, local_embedder.embed("the cat sat on the mat")) == pytest.approx(1.0)


def test_openai_compatible_embeddings_over_http(model_server: ModelServer) -> None:
    embedder = OpenAICompatibleEmbeddingAdapter(base_url=model_server.openai_url, model="nomic-embed-text")
    a, b = embedder.embed_many(["refund the order", "refund the order"])
    assert a == b and a.model == "nomic-embed-text" and len(a.vector) == 64
    assert model_server.requests[0].body == {"model": "nomic-embed-text", "input": ["refund the order"]}
    local = EmbeddingResult(tuple([0.1] * 64), "all-MiniLM-L6-v2", "0.1.0")
    with pytest.raises(ValueError):
        cosine_similarity(a, local)
