"""Which calls are faulted, in process: the documented keyed hash recomputed independently, each
fault firing at its rate (a binomial bound), and a call's latencies adding up while only the
first other fault that fires ends it."""

from __future__ import annotations

import hashlib

from scipy.stats import binom

from poisson_prove.chaos.decide import EpisodeChaos, draw, fault_key

SALT = "00112233445566778899aabbccddeeff"


def _documented_draw(salt: str, chaos_seed: int | None, seed: int, call: int, fault: str) -> float:
    """u = blake2b(key = sha256("S:chaos_seed"), message = "s:i:F") as a number in [0, 1)."""
    key = hashlib.sha256(f"{salt}:{'' if chaos_seed is None else chaos_seed}".encode()).digest()
    digest = hashlib.blake2b(f"{seed}:{call}:{fault}".encode(), key=key, digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def test_the_draw_is_the_documented_keyed_hash() -> None:
    for chaos_seed in (None, 0, 7):
        key = fault_key(SALT, chaos_seed)
        for seed, call, fault in [(1, 0, "slow"), (2**40, 3, "throttled"), (5, 99, "tool_down")]:
            u = draw(key, seed, call, fault)
            assert 0.0 <= u < 1.0
            assert u == _documented_draw(SALT, chaos_seed, seed, call, fault)
    # A different salt, chaos seed, episode or fault name gives a different number.
    base = draw(fault_key(SALT, None), 1, 0, "slow")
    assert base != draw(fault_key(SALT[::-1], None), 1, 0, "slow")
    assert base != draw(fault_key(SALT, 1), 1, 0, "slow")
    assert base != draw(fault_key(SALT, None), 2, 0, "slow")
    assert base != draw(fault_key(SALT, None), 1, 0, "fast")


def test_each_fault_fires_at_its_rate_and_only_on_matching_calls() -> None:
    chaos = {
        "salt": SALT,
        "faults": [
            {"name": "slow", "kind": "latency", "seconds": 0.5, "rate": 0.3},
            {"name": "slower", "kind": "latency", "seconds": 2.0, "rate_axis": "lag"},
            {"name": "throttled", "kind": "http_status", "status": 429, "rate": 0.2},
            {"name": "down", "kind": "timeout", "rate": 0.5, "hosts": ["tools.example"], "paths": ["/v1"]},
            {"name": "never", "kind": "timeout", "rate": 0.0},
        ],
    }
    calls = 4000
    episode = EpisodeChaos(chaos, {"lag": 0.1}, seed=12345)
    assert [f["name"] for f in episode.faults] == ["slow", "slower", "throttled", "down"]  # rate 0 dropped
    fired = {"slow": 0, "slower": 0, "throttled": 0, "down": 0}
    key = fault_key(SALT, None)
    for index in range(calls):
        host, path = ("tools.example", "/v1/search") if index % 2 else ("model.example", "/v1/chat")
        call = episode.next_call(host, path)
        assert call.index == index
        hits = {name: draw(key, 12345, index, name) < rate
                for name, rate in (("slow", 0.3), ("slower", 0.1), ("throttled", 0.2), ("down", 0.5))}
        hits["down"] = hits["down"] and host == "tools.example"
        assert call.delay == 0.5 * hits["slow"] + 2.0 * hits["slower"]
        assert [f["name"] for f in call.delayed_by] == [n for n in ("slow", "slower") if hits[n]]
        terminal = "throttled" if hits["throttled"] else "down" if hits["down"] else None
        assert (call.terminal or {}).get("name") == terminal  # the first in the spec's order wins
        for name in fired:
            fired[name] += hits[name]
    for name, rate, trials in (("slow", 0.3, calls), ("slower", 0.1, calls), ("throttled", 0.2, calls),
                               ("down", 0.5, calls // 2)):
        low, high = binom.interval(0.9999, trials, rate)
        assert low <= fired[name] <= high, (name, fired[name])
