"""On-disk response caches: model replies (ResponseCache) and engine replies (EngineCache).

Entries are one JSON file each, written under a temporary name and renamed into place
(prove_common.files), so any number of processes may read and write one cache at once: a
reader sees a whole entry or none, and two writers of one key write the same bytes. A write
clears what killed writers left in its shard folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prove_common.files import clear_stale_temps, write_bytes_atomic
from prove_common.jsonio import canonical_json
from proveai.providers._http import HTTPChatProvider
from proveai.providers.base import (
    Message,
    Provider,
    ProviderResponse,
    as_response,
    provider_id_of,
    record_on_current_span,
)
from proveai.providers.registry import dispatch

CACHE_FORMAT = 1


def cache_disabled_by_env() -> bool:
    return os.environ.get("PROVEAI_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


def default_cache_root() -> Path:
    return Path(os.environ.get("PROVEAI_CACHE_DIR") or Path.home() / ".proveai-cache")


class _JsonFileStore:
    """sha256-keyed JSON files under `root/<2 hex>/<64 hex>.json`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def read(self, key: str) -> dict[str, Any] | None:
        try:
            with open(self.path(key), encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):  # absent, or unreadable: a miss, never a crash
            return None
        return data if isinstance(data, dict) else None

    def write(self, key: str, data: Mapping[str, Any]) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        clear_stale_temps(path.parent)
        text = json.dumps(data, ensure_ascii=False, sort_keys=True)
        # not fsynced (a lost entry is one more call); 0o600: a reply stays its user's, as before
        write_bytes_atomic(path, text.encode("utf-8"), durable=False, mode=0o600)


class ResponseCache:
    """Model replies keyed by sha256(provider id incl. base URL, model, messages, sorted kwargs).

    root: default $PROVEAI_CACHE_DIR, else ~/.proveai-cache. enabled=False (or
    PROVEAI_NO_CACHE=1) makes every lookup a miss and every store a no-op. `hits` and
    `misses` count lookups made through this object.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, enabled: bool = True) -> None:
        self.root = Path(root) if root is not None else default_cache_root()
        self.enabled = enabled and not cache_disabled_by_env()
        self._files = _JsonFileStore(self.root)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(provider_id: str, model: str, messages: Sequence[Message], kwargs: Mapping[str, Any]) -> str:
        payload = canonical_json(
            {
                "format": CACHE_FORMAT,
                "provider": provider_id,
                "model": model,
                "messages": [dict(m) for m in messages],
                "kwargs": dict(sorted(kwargs.items())),
            }
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        data = self._files.read(key) if self.enabled else None
        with self._lock:
            if data is None:
                self.misses += 1
            else:
                self.hits += 1
        return data

    def put(self, key: str, value: Mapping[str, Any]) -> None:
        if self.enabled:
            self._files.write(key, value)

    def evict(self, key: str) -> None:
        """Forget one entry (e.g. a reply that turned out unusable)."""
        if self.enabled:
            self._files.path(key).unlink(missing_ok=True)

    @property
    def calls(self) -> int:
        return self.hits + self.misses

    def reset_counters(self) -> None:
        with self._lock:
            self.hits = self.misses = 0

    def __repr__(self) -> str:
        counts = f"hits={self.hits}, misses={self.misses}"
        return f"ResponseCache(root={str(self.root)!r}, enabled={self.enabled}, {counts})"


class CachedProvider:
    """Wraps any provider: identical calls are answered from the cache without a request."""

    def __init__(self, provider: Provider, cache: ResponseCache | None = None) -> None:
        self.provider = provider
        self.cache = cache if cache is not None else default_cache()

    @property
    def provider_id(self) -> str:
        return provider_id_of(self.provider)

    def supports(self, model: str) -> bool:
        supports = getattr(self.provider, "supports", None)
        return bool(supports(model)) if callable(supports) else True

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse:
        key = ResponseCache.key(self.provider_id, model, messages, kwargs)
        stored = self.cache.get(key)
        if stored is not None:
            response = ProviderResponse.from_dict(stored, cached=True)
            record_on_current_span(messages, response, model, kwargs)
            return response
        response = as_response(self.provider.call(messages, model, **kwargs), model)
        self.cache.put(key, response.to_dict())
        return response

    def evict(self, messages: Sequence[Message], model: str, **kwargs: Any) -> None:
        self.cache.evict(ResponseCache.key(self.provider_id, model, messages, kwargs))

    def __repr__(self) -> str:
        return f"CachedProvider({self.provider!r}, cache={self.cache!r})"


_default_cache: ResponseCache | None = None
_default_lock = threading.Lock()


def default_cache() -> ResponseCache:
    """The process-wide cache (created on first use from the environment)."""
    global _default_cache
    with _default_lock:
        if _default_cache is None:
            _default_cache = ResponseCache()
        return _default_cache


def set_default_cache(cache: ResponseCache | None) -> None:
    """Replace the process-wide cache; None re-reads the environment on next use."""
    global _default_cache
    with _default_lock:
        _default_cache = cache


def cached_dispatch(model: str, cache: ResponseCache | None = None) -> CachedProvider:
    """`dispatch(model)` wrapped in a CachedProvider (the default cache unless given)."""
    provider = dispatch(model)
    if isinstance(provider, CachedProvider):  # dispatch already cached it (a verify re-run)
        provider = provider.provider
    return CachedProvider(provider, cache if cache is not None else default_cache())


def dispatch_cached(model: str) -> Provider:
    """`proveai.dispatch`: the registry's provider for `model`, under the verify-time cache policy.

    Inside a `proveai snapshot verify` re-run (PROVEAI_VERIFY=1) a built-in HTTP provider
    (OpenAI-compatible, Anthropic, env-registered) comes wrapped in the default response
    cache, so an agent whose request did not change costs no model call on a re-verify.
    Only proveai's own HTTP providers: a custom or mock provider is the user's code and keeps
    answering for itself (wrap it with cached_dispatch to cache it). PROVEAI_NO_CACHE=1 and
    any run outside verify get the provider as registered.
    """
    provider = dispatch(model)
    if os.environ.get("PROVEAI_VERIFY") != "1" or not isinstance(provider, HTTPChatProvider):
        return provider
    return provider if cache_disabled_by_env() else CachedProvider(provider, default_cache())


class EngineCacheMiss(LookupError):
    """Raised by an offline EngineCache that has no stored reply for a request."""


class EngineCache:
    """Detection-engine replies keyed by sha256 of the canonical request payload.

    offline=True turns a miss into EngineCacheMiss, so a test or CI job never reaches the
    engine. root: default <cache dir>/engine.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, offline: bool = False) -> None:
        self.root = Path(root) if root is not None else default_cache_root() / "engine"
        self.offline = offline
        self._files = _JsonFileStore(self.root)

    @staticmethod
    def key(endpoint: str, payload: Any) -> str:
        text = canonical_json({"endpoint": endpoint, "payload": payload})
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, endpoint: str, payload: Any) -> dict[str, Any] | None:
        data = self._files.read(self.key(endpoint, payload))
        if data is None and self.offline:
            raise EngineCacheMiss(f"no cached engine reply for {endpoint} (offline cache at {self.root})")
        return data

    def put(self, endpoint: str, payload: Any, reply: Mapping[str, Any]) -> None:
        self._files.write(self.key(endpoint, payload), reply)
