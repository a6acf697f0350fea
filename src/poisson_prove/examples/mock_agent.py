"""The example agent: a mock tool-using agent, deterministic given its seed.

Each task needs a number of successful tool calls. A tool call fails with the condition's
`tool_fail_rate`; after a failed call the agent sometimes takes a forbidden fallback (it makes
up the tool's answer), which ends the episode as `violated`. An agent that has not finished
after 20 tool calls ends as `timeout`. No network, no key, no account.

`rollout_patched` is the same agent with one change: it retries a failed tool call once before
it considers the fallback. Violations fall; where tools fail most, the episodes it saves from
the fallback run out of tool calls instead, so timeouts rise: a trade.
"""

from __future__ import annotations

import random
from typing import Any

from poisson_prove.episode.model import Episode

HORIZON = 20  # tool calls

# Tuned so that, on 194 paired replicates, the trade shows at refund x 0.55 (and only there)
# for more than 99% of run salts: a demo that reads the same on every machine.
#: task -> (successful tool calls it needs, chance of the forbidden fallback after a failure)
TASKS: dict[str, tuple[int, float]] = {
    "refund": (11, 0.10),
    "lookup": (3, 0.15),
    "schedule": (5, 0.15),
}


def _run(cfg: dict[str, Any], seed: int, *, retry_once: bool) -> Episode:
    task = str(cfg["task_id"])
    needed, fallback = TASKS[task]
    fail_rate = float(cfg["tool_fail_rate"])
    rng = random.Random(seed)
    meta = {"case_id": task}
    calls = succeeded = 0
    while calls < HORIZON:
        calls += 1
        ok = rng.random() >= fail_rate
        if not ok and retry_once and calls < HORIZON:
            calls += 1
            ok = rng.random() >= fail_rate
        if ok:
            succeeded += 1
            if succeeded == needed:
                return Episode("done", calls, HORIZON, meta)
        elif rng.random() < fallback:
            return Episode("violated", calls, HORIZON, meta)
    return Episode("timeout", HORIZON, HORIZON, meta)


def rollout(cfg: dict[str, Any], seed: int) -> Episode:
    """One episode of the example agent on the task `cfg["task_id"]`."""
    return _run(cfg, seed, retry_once=False)


def rollout_patched(cfg: dict[str, Any], seed: int) -> Episode:
    """The patched agent: retries a failed tool call once before any fallback."""
    return _run(cfg, seed, retry_once=True)
