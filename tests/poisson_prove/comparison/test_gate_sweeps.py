"""The three-valued gate on real sweeps of a rollout whose failure rate the test controls."""

from __future__ import annotations

import json
from pathlib import Path

from tests.poisson_prove.helpers import small_spec, write

TARGET = """
import os, random
from poisson_prove import Episode

RATE = float(os.environ.get("BAD_RATE", "0.3"))

def rollout(cfg, seed):
    rng = random.Random(seed)
    return Episode("bad" if rng.random() < RATE else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""


SALT = "0badc0de"


def _sweeps(prove, workdir: Path, replicates: int, after_rate: str) -> None:
    write(workdir, "agent.py", TARGET)
    small_spec(workdir, replicates=replicates)
    # a pinned salt: with a random one, some draws give a condition whose observed rate is so
    # high that no rise of 0.9 fits below 1, and the lenient check is rightly inconclusive
    first = prove("sweep", "--yes", "--max-mde", "0.9", "--salt", SALT, env={"BAD_RATE": "0.3"})
    assert first.returncode == 0, first.stderr
    second = prove(
        "sweep", "--yes", "--max-mde", "0.9", "--pair-with", "latest", env={"BAD_RATE": after_rate}
    )
    assert second.returncode == 0, second.stderr


def test_a_small_unchanged_sweep_is_inconclusive_at_a_strict_max_mde(prove, workdir: Path) -> None:
    _sweeps(prove, workdir, 16, "0.3")
    lenient = prove("check")  # the plan accepted 0.9: a no-rise is settled at that size
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    strict = prove("check", "--max-mde", "0.2", "--json")
    document = json.loads(strict.stdout)
    assert strict.returncode == 5 and document["exit_code"] == 5
    assert document["gate"]["status"] == "inconclusive" and document["gate"]["replicates_needed"] > 16
    assert strict.stderr == ""


def test_a_real_rise_exits_4(prove, workdir: Path) -> None:
    _sweeps(prove, workdir, 16, "1.0")
    result = prove("check", "--max-mde", "0.2")
    assert result.returncode == 4, result.stdout
    assert "inconclusive" not in result.stdout
