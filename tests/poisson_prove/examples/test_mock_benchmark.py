"""The benchmark example through the installed script: the docs' plan lines, the run and its
patched twin paired on the same seeds, and the benchmark-level fall the twin shows, tested over
the cases with the exact sign-flip test on the stored rows."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from importlib import resources
from pathlib import Path

import numpy as np

from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import episode_seeds
from poisson_prove.examples.mock_benchmark import difficulty, patched_difficulty, rollout, rollout_patched
from poisson_prove.stats.clustered import sign_flip
from tests.poisson_prove.helpers import episodes, manifests, tree

PATCHED = "poisson_prove.examples.mock_benchmark:rollout_patched"
SALT = "0123456789abcdef0123456789abcdef"
PLAN = [
    "plan 360 rollouts of mock-benchmark: 120 cases x 3 replicates on local, $0 (local)",
    "target poisson_prove.examples.mock_benchmark:rollout (imports, takes cfg and seed)",
    "outcomes failures: unresolved; successes: resolved",
    "axes question 120 cases from questions.jsonl",
    "seeds salt 01234567, given with --salt",
    "store prove-runs",
    "if independent one pooled group alone would be flagged for 0.107 at its worst base rate, 0.400, when a "
    "case's repeats are independent (within-case correlation 0, n = 360 = 120 cases x 3 replicates); more "
    "replicates move only this figure",
    "smallest rise one pooled group alone would be flagged for 0.191 at its worst base rate, 0.400, when a "
    "case's repeats always agree (within-case correlation 1, n = 120 cases; Fisher, q 0.05 over 1 test, 4 "
    "times in 5; you accept up to 0.200)",
]


def _questions() -> list[str]:
    text = resources.files("poisson_prove.examples").joinpath("questions.jsonl").read_text()
    return [json.loads(line)["id"] for line in text.splitlines()]


def _discordant(pairs: dict[str, list[tuple[bool, bool]]]) -> tuple[np.ndarray, np.ndarray]:
    b = np.array([sum(x and not y for x, y in pairs[k]) for k in sorted(pairs)])
    c = np.array([sum(y and not x for x, y in pairs[k]) for k in sorted(pairs)])
    return b, c


def test_dry_run_prints_the_docs_plan(prove, workdir: Path) -> None:
    assert prove("init", "--benchmark").returncode == 0
    before = tree(workdir)
    result = prove("sweep", "--dry-run", "--salt", SALT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == PLAN
    assert result.stderr == ""
    assert tree(workdir) == before


def test_the_patched_twin_shows_a_fall_over_the_cases(prove, workdir: Path) -> None:
    assert prove("init", "--benchmark").returncode == 0
    first = prove("sweep", "--yes", "--salt", SALT)
    assert first.returncode == 0, first.stderr
    second = prove("sweep", "--yes", "--target", PATCHED, "--pair-with", "latest")
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[-1] == "next: poisson-prove diff"
    before, after = manifests(workdir / "prove-runs")
    assert after["paired_with"] == before["run_id"] and after["salt"] == before["salt"] == SALT

    rows = episodes(workdir / "prove-runs")
    assert len(rows) == 720 and all(row["outcome"] is not None for row in rows)
    by_run: dict[str, dict[tuple[str, int], dict]] = defaultdict(dict)
    for row in rows:
        assert row["case_id"] == json.loads(row["cfg"])["question"]  # the sweep set it
        by_run[row["run_id"]][(row["cell"], row["replicate"])] = row
    a, b = by_run[before["run_id"]], by_run[after["run_id"]]
    assert a.keys() == b.keys() and all(a[k]["seed"] == b[k]["seed"] for k in a)
    pairs: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for key, row in a.items():
        pairs[row["case_id"]].append((row["outcome"] == "unresolved", b[key]["outcome"] == "unresolved"))
    assert len(pairs) == 120 and {len(p) for p in pairs.values()} == {3}
    result = sign_flip(*_discordant(pairs))
    assert result.t < 0 and result.cases_down > result.cases_up > 0  # fixes, and a few breaks
    assert result.p_mid < 0.05 / 1  # q over the pooled family: 1 group x 1 failure outcome
    # Twins differ only on the questions the patch touched.
    touched = {q for q in pairs if patched_difficulty(q) != difficulty(q)}
    assert {q for q, p in pairs.items() if any(x != y for x, y in p)} <= touched


def test_difficulty_is_the_cases_own_and_the_patch_fixes_many_and_breaks_few() -> None:
    questions = _questions()
    assert len(questions) == len(set(questions)) == 120
    fixed = [q for q in questions if patched_difficulty(q) < difficulty(q)]
    broken = [q for q in questions if patched_difficulty(q) > difficulty(q)]
    assert (len(fixed), len(broken)) == (44, 4)
    assert all(0 <= difficulty(q) <= 1 and 0 <= patched_difficulty(q) <= 1 for q in questions)
    # Deterministic from the case id and the seed, whatever else cfg holds.
    for seed in (1, 2, 99):
        assert rollout({"question": "q007", "x": 1}, seed) == rollout({"question": "q007"}, seed)
    hard = max(questions, key=difficulty)
    assert sum(rollout({"question": hard}, s).outcome == "unresolved" for s in range(200)) > 150


def test_the_fall_shows_for_every_salt_tried() -> None:
    questions = _questions()
    rng = random.Random(7)
    for _ in range(40):
        salt = f"{rng.getrandbits(128):032x}"
        pairs: dict[str, list[tuple[bool, bool]]] = {}
        for question in questions:
            cfg = {"question": question}
            seeds = episode_seeds(salt, condition_key(cfg), range(3))
            pairs[question] = [
                (rollout(cfg, s).outcome == "unresolved", rollout_patched(cfg, s).outcome == "unresolved")
                for s in seeds
            ]
        result = sign_flip(*_discordant(pairs))
        assert result.t < 0 and result.p_mid < 0.05, (salt, result)
