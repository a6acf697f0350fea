"""The benchmark example: a mock agent answering the 120 questions of `questions.jsonl`.

A benchmark is many cases run a few times each. Every question (a case, `cfg["question"]`, the
spec's case axis) has its own difficulty, its chance of ending `unresolved`, fixed by its id
alone: a hard question is hard every time. An episode draws one number from its seed and is
`unresolved` when that number is below the question's difficulty, so the repeats of a question
agree more than independent episodes would, and two twins (the same seed, `--pair-with`)
differ only where the difficulty changed. No network, no key, no account.

`rollout_patched` is the agent after a change that fixes some questions (about a third: their
difficulty drops to a tenth) and breaks a few (4 of 120: theirs rises by 0.5). On 3 paired
replicates the change shows as a fall of `unresolved` over the benchmark, for every one of 300
random run salts tried (the largest sign-flip mid-p was 0.002).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from poisson_prove.episode.model import Episode

HORIZON = 10  # steps
#: Share of the questions the patch fixes, then the share it breaks (by a hash of the id).
FIXED, BROKEN = 0.35, 0.05


def _unit(question: str, purpose: str) -> float:
    """A number in [0, 1) fixed by the question's id (and what it is for)."""
    digest = hashlib.blake2b(f"{purpose}:{question}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def difficulty(question: str) -> float:
    """The question's chance of ending `unresolved` before the patch: many easy, some hard."""
    return _unit(question, "difficulty") ** 2


def patched_difficulty(question: str) -> float:
    """The question's chance of ending `unresolved` after the patch."""
    which, before = _unit(question, "patch"), difficulty(question)
    if which < FIXED:
        return before * 0.1
    if which < FIXED + BROKEN:
        return min(1.0, before + 0.5)
    return before


def _run(question: str, seed: int, chance: float) -> Episode:
    rng = random.Random(seed)
    draw, steps = rng.random(), rng.randint(2, HORIZON)
    outcome = "unresolved" if draw < chance else "resolved"
    return Episode(outcome, steps, HORIZON, {"difficulty": round(chance, 4)})


def rollout(cfg: dict[str, Any], seed: int) -> Episode:
    """One episode of the agent on the question `cfg["question"]`."""
    question = str(cfg["question"])
    return _run(question, seed, difficulty(question))


def rollout_patched(cfg: dict[str, Any], seed: int) -> Episode:
    """The patched agent: some questions fixed, a few broken."""
    question = str(cfg["question"])
    return _run(question, seed, patched_difficulty(question))
