"""Which calls are faulted: a keyed hash, so paired runs see the same faults on the same calls.

The decision for fault F on call i of the episode with seed s in a run with salt S is

    u = blake2b(key = sha256("S:chaos_seed"), message = "s:i:F") read as a number in [0, 1)
    faulted  <=>  u < rate

so it depends on nothing else: not the order episodes run in, not the backend, not the time.
Two runs paired with --pair-with share S and every s, so a paired comparison sees the same
faults wherever the two agents make the same calls.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_SCALE = float(2**64)


def fault_key(salt: str, chaos_seed: int | None) -> bytes:
    return hashlib.sha256(f"{salt}:{'' if chaos_seed is None else chaos_seed}".encode()).digest()


def draw(key: bytes, episode_seed: int, call_index: int, fault_name: str) -> float:
    """The uniform number in [0, 1) that decides fault `fault_name` on this call."""
    digest = hashlib.blake2b(f"{episode_seed}:{call_index}:{fault_name}".encode(), key=key, digest_size=8)
    return int.from_bytes(digest.digest(), "big") / _SCALE


def _matches(fault: Mapping[str, Any], host: str, path: str) -> bool:
    hosts = fault.get("hosts")
    if hosts and host.lower() not in hosts:
        return False
    paths = fault.get("paths")
    return not paths or any(path.startswith(p) for p in paths)


@dataclass
class CallFaults:
    """What happens to one call: its index, added delay and the terminal fault (if any)."""

    index: int
    delay: float = 0.0
    delayed_by: list[dict[str, Any]] = field(default_factory=list)
    terminal: dict[str, Any] | None = None


class EpisodeChaos:
    """One episode's faults with their rates resolved for its condition, its call counter and
    what reached it: the calls through each client chaos can fault, and the calls each fault hit."""

    def __init__(self, chaos: Mapping[str, Any], cfg: Mapping[str, Any], seed: int) -> None:
        self.key = fault_key(str(chaos.get("salt", "")), chaos.get("seed"))
        self.seed = int(seed)
        self.faults = []
        for fault in chaos.get("faults", ()):
            rate = float(cfg[fault["rate_axis"]]) if "rate_axis" in fault else float(fault["rate"])
            if rate > 0:
                self.faults.append({**fault, "rate": rate})
        self._counter = itertools.count()
        self._lock = threading.Lock()
        self.calls = 0  # calls through a client chaos can fault
        self.faulted = 0  # of those, the calls a fault hit (a latency counts)
        self.clients: dict[str, int] = {}  # client -> calls, in the order first used
        self.hits: dict[str, int] = {}  # fault name -> calls it hit

    def next_call(self, host: str, path: str, client: str = "") -> CallFaults:
        """Count one call (made through `client`) and decide its faults: every latency that
        fires adds up; the first other fault that fires (in the spec's order) ends the call."""
        with self._lock:
            index = next(self._counter)
            self.calls += 1
            self.clients[client] = self.clients.get(client, 0) + 1
        call = CallFaults(index)
        for fault in self.faults:
            if not _matches(fault, host, path):
                continue
            if draw(self.key, self.seed, index, fault["name"]) >= fault["rate"]:
                continue
            if fault["kind"] == "latency":
                call.delay += fault["seconds"]
                call.delayed_by.append(fault)
            elif call.terminal is None:
                call.terminal = fault
        hit = [*call.delayed_by, *([call.terminal] if call.terminal is not None else [])]
        if hit:
            with self._lock:
                self.faulted += 1
                for fault in hit:
                    self.hits[fault["name"]] = self.hits.get(fault["name"], 0) + 1
        return call
