"""The underpowered refusal's numbers: a printed MDE above --max-mde never reads as at or under it."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.design.plan import fraction_text, mde_above_text
from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import small_spec, write

AGENT = "def rollout(cfg, seed):\n    return {'outcome': 'ok', 't': 1}\n"


def test_an_mde_just_above_the_limit_prints_a_fourth_decimal(prove, workdir: Path) -> None:
    # 2 conditions x 1 failure at 125 replicates: the worst-case MDE is 0.2001, above 0.200
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=125)
    text = prove("sweep", "--dry-run")
    assert_clean_error(
        text, 1,
        "error: underpowered design: one condition alone would be flagged for a change of 0.2001 at "
        "its worst base rate, 0.400, and you accept 0.200\n",
        "next: poisson-prove sweep --dry-run --max-mde 0.201\n",
    )
    document = json.loads(prove("sweep", "--dry-run", "--json").stdout)
    assert document["design_mde"]["mde"] == 0.2001
    assert "a change of 0.2001 at" in document["error"]["message"]


def test_the_rule_prints_three_decimals_unless_they_would_read_as_passing() -> None:
    assert mde_above_text(0.5186, 0.2) == "0.519"  # STATISTICS.md section 6's vector is unchanged
    assert mde_above_text(0.2001, 0.2) == "0.2001"
    assert mde_above_text(0.2004, 0.2) == "0.2004"  # "0.200" would read as accepted
    assert mde_above_text(0.2006, 0.2) == "0.201"
    assert mde_above_text(0.3002, 0.3001) == "0.3002"  # "0.300" is under the limit
    assert fraction_text(0.2) == "0.200" and fraction_text(0.3001) == "0.3001"
