"""The plan's cost counts the spec's own `cost_per_episode`, as `--budget` prices an episode."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import small_spec, write

AGENT = "def rollout(cfg, seed):\n    return {'outcome': 'ok', 't': 1}\n"
OWN_COST = "\n[local]\ncost_per_episode = 0.01\n"


def test_the_plan_line_and_json_cost_what_the_budget_spends(prove, workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=20, extra=OWN_COST)
    result = prove("sweep", "--dry-run", "--json", "--budget", "17.46", "--max-mde", "0.3")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["budget"]["replicates"] == 873  # $17.46 / (2 cells x $0.01)
    assert abs(document["plan"]["cost_usd"] - document["budget"]["cost_usd"]) < 1e-9
    assert abs(document["plan"]["cost_usd"] - 17.46) < 1e-9
    text = prove("sweep", "--dry-run", "--budget", "17.46", "--max-mde", "0.3")
    assert text.stdout.splitlines()[0] == (
        "plan 1,746 rollouts of agent: 2 cells x 873 replicates on local, "
        "$17.46 (local $0 + cost_per_episode $0.01 x 1,746)"
    )
    # without --budget the plan prices the same episodes, and --max-cost reads that price
    capped = prove("sweep", "--dry-run", "--replicates", "200", "--max-cost", "1")
    assert_clean_error(capped, 1, "error: the estimate $4.00 is above --max-cost $1.00; nothing was run")


def test_a_plan_without_an_own_cost_still_reads_dollar_zero(prove, workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=200)
    result = prove("sweep", "--dry-run")
    assert result.stdout.splitlines()[0].endswith("2 cells x 200 replicates on local, $0 (local)")
