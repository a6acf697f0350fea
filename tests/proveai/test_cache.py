"""ResponseCache and CachedProvider: keys, hits, the env switches, concurrent writers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from proveai.cache import (
    CachedProvider,
    EngineCache,
    EngineCacheMiss,
    ResponseCache,
    cached_dispatch,
    default_cache,
    set_default_cache,
)
from proveai.providers import OpenAICompatibleProvider, register_provider
from tests.proveai.model_server import ModelServer

# no provider variables from the outer environment, and a cache of the test's own

MESSAGES = [{"role": "user", "content": "hello"}]


def test_identical_calls_hit_the_cache_and_kwargs_split_keys(
    model_server: ModelServer, tmp_path: Path
) -> None:
    cache = ResponseCache(root=tmp_path / "c")
    provider = CachedProvider(OpenAICompatibleProvider(base_url=model_server.openai_url), cache=cache)
    first = provider.call(MESSAGES, "m", seed=1)
    second = provider.call(MESSAGES, "m", seed=1)
    assert model_server.count() == 1
    assert (first.text, first.cached, second.text, second.cached) == (first.text, False, first.text, True)
    provider.call(MESSAGES, "m", seed=2)
    provider.call(MESSAGES, "other-model", seed=1)
    assert model_server.count() == 3
    assert (cache.hits, cache.misses) == (1, 3)
    files = sorted(tmp_path.glob("c/*/*.json"))
    assert len(files) == 3 and all(json.loads(f.read_text())["text"] for f in files)


def test_key_includes_provider_identity_and_sorted_kwargs() -> None:
    a = ResponseCache.key("openai-compatible:http://a/v1", "m", MESSAGES, {"seed": 1, "temperature": 0})
    b = ResponseCache.key("openai-compatible:http://a/v1", "m", MESSAGES, {"temperature": 0, "seed": 1})
    c = ResponseCache.key("openai-compatible:http://b/v1", "m", MESSAGES, {"seed": 1, "temperature": 0})
    assert a == b != c and len(a) == 64


def test_disabled_cache_and_no_cache_env(
    model_server: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = OpenAICompatibleProvider(base_url=model_server.openai_url)
    off = CachedProvider(inner, cache=ResponseCache(root=tmp_path / "off", enabled=False))
    off.call(MESSAGES, "m")
    off.call(MESSAGES, "m")
    monkeypatch.setenv("PROVEAI_NO_CACHE", "1")
    env_off = CachedProvider(inner, cache=ResponseCache(root=tmp_path / "env"))
    env_off.call(MESSAGES, "m")
    env_off.call(MESSAGES, "m")
    assert model_server.count() == 4
    assert not list(tmp_path.glob("off/**/*.json")) and not list(tmp_path.glob("env/**/*.json"))


def test_default_cache_follows_the_env_and_cached_dispatch_uses_it(
    model_server: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVEAI_CACHE_DIR", str(tmp_path / "envcache"))
    set_default_cache(None)
    assert default_cache().root == tmp_path / "envcache"
    register_provider("local-*", OpenAICompatibleProvider(base_url=model_server.openai_url))
    cached_dispatch("local-1").call(MESSAGES, "local-1")
    cached_dispatch("local-1").call(MESSAGES, "local-1")
    assert model_server.count() == 1 and default_cache().hits == 1
    mine = ResponseCache(root=tmp_path / "mine")
    set_default_cache(mine)
    assert default_cache() is mine


AGENT = """
import json, sys
from proveai import FileExporter, monitor, trace
from proveai import dispatch

@monitor("classify", model="acme-1")
def classify(ticket):
    return dispatch("acme-1").call([{"role": "system", "content": "Be terse."},
                                   {"role": "user", "content": ticket}], "acme-1").text

with trace("svc", exporters=[FileExporter()]) as t:
    classify("my order arrived broken")
print(t.trace_id)
"""


def test_under_verify_dispatch_serves_unchanged_requests_from_the_cache(
    model_server: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    env = {
        **os.environ,
        "PROVEAI_PROVIDER_PATTERN": "acme-*",
        "PROVEAI_PROVIDER_BASE_URL": model_server.openai_url,
        "PROVEAI_CACHE_DIR": str(tmp_path / "cache"),
        "PROVEAI_TRACES_DIR": str(tmp_path / "traces"),
    }

    def rerun(**extra: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", AGENT], env={**env, **extra}, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    rerun(PROVEAI_VERIFY="1")
    second = rerun(PROVEAI_VERIFY="1")
    assert model_server.count() == 1  # the unchanged request cost nothing the second time
    exported = json.loads((tmp_path / "traces" / f"{second}.json").read_text())
    (span,) = exported["resourceSpans"][0]["scopeSpans"][0]["spans"]
    attrs = {a["key"]: a["value"] for a in span["attributes"]}
    assert "Be terse." in attrs["gen_ai.input.messages"]["stringValue"]  # a cached reply still records it
    rerun()  # outside verify, dispatch is the plain provider: a live call
    rerun(PROVEAI_VERIFY="1", PROVEAI_NO_CACHE="1")
    assert model_server.count() == 3
    # in-process: custom providers are never wrapped, and cached_dispatch wraps exactly once
    monkeypatch.setenv("PROVEAI_VERIFY", "1")
    custom = type("Custom", (), {"call": lambda self, m, model, **k: "hi", "supports": lambda s, m: True})()
    register_provider("custom-*", custom)
    from proveai import dispatch

    assert dispatch("custom-1") is custom
    register_provider("local-*", OpenAICompatibleProvider(base_url=model_server.openai_url))
    assert isinstance(dispatch("local-1"), CachedProvider)
    assert not isinstance(cached_dispatch("local-1").provider, CachedProvider)


WRITER = """
import sys
from proveai.cache import ResponseCache
cache = ResponseCache(root=sys.argv[1])
for i in range(60):
    key = ResponseCache.key("p", "m", [{"role": "user", "content": str(i % 20)}], {})
    cache.put(key, {"text": "x" * 5000 + str(i % 20), "model": "m"})
    got = cache.get(key)
    assert got is not None and got["text"].endswith(str(i % 20)), got
"""


def test_concurrent_processes_never_see_a_torn_entry(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root)]) for _ in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    entries = list(root.glob("*/*.json"))
    assert len(entries) == 20
    assert all(json.loads(e.read_text())["model"] == "m" for e in entries)
    assert not list(root.glob("*/*.tmp"))


def test_engine_cache_offline_miss_raises(tmp_path: Path) -> None:
    cache = EngineCache(root=tmp_path / "engine", offline=True)
    with pytest.raises(EngineCacheMiss):
        cache.get("/ingest/traces", {"trace": 1})
    cache.put("/ingest/traces", {"trace": 1}, {"detected": False})
    assert cache.get("/ingest/traces", {"trace": 1}) == {"detected": False}


def test_cache_keys_stay_byte_identical_across_versions() -> None:
    """Entries written by earlier versions must still be found: these keys were computed by them."""
    messages = [
        {"role": "system", "content": "Be terse. é → ✓"},
        {"role": "user", "content": "Refund $1,200?"},
    ]
    kwargs = {"temperature": 0, "max_tokens": 64, "seed": None}
    assert ResponseCache.key("openai:http://127.0.0.1:9/v1", "gpt-4o-mini", messages, kwargs) == (
        "ef25a5d0d6dd46216fc15834d1b9f6c5df302f715f2ac104aeec9d9756bcf5e8"
    )
    payload = {"trace": {"b": [1, 2.5, None], "a": "ü"}}
    engine_key = "b25dbbc1a1cd8e26aba9724c0e9dda7b2eb4e2e9614826245e6b3b6f19c3355c"
    assert EngineCache.key("/analyze", payload) == engine_key
