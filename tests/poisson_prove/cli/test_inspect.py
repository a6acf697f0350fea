"""`inspect` through the installed console script: a run's errors, and one episode in full."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import episode_seed
from tests.conftest import assert_clean_error
from tests.poisson_prove.runs import store_with_pair


def test_inspect_errors_and_one_episode(prove, workdir: Path) -> None:
    _store, a, b = store_with_pair(workdir, error=4)
    result = prove("inspect")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith(f'run "{b.name}" ({b.run_id}), complete: 240 of 240 planned episodes, '
                                    "4 without an outcome\n")
    assert "RuntimeError      4   1.7%" in result.stdout
    assert "the tool API returned 503" in result.stdout and "ticket refund · temperature 0.0" in result.stdout
    seed = episode_seed(a.manifest["salt"], condition_key({"ticket": "refund", "temperature": 0.0}), 0)
    for selector in (
        "ticket refund · temperature 0.0/0",
        '{"temperature":0.0,"ticket":"refund"}/0',
        "ticket=refund,temperature=0/0",
        "ticket=refund/0",
    ):
        shown = prove("inspect", a.name, "--episode", selector)
        assert shown.returncode == 0, (selector, shown.stderr)
        assert "outcome     unresolved" in shown.stdout
        assert f"seed        {seed}\n" in shown.stdout
    errored = json.loads(prove("inspect", a.name, "--episode", "ticket=refund/50", "--json").stdout)
    assert errored["schema"] == "poisson-prove.inspect/1"
    assert errored["episode"]["error_kind"] == "RuntimeError" and errored["episode"]["outcome"] is None
    missing = prove("inspect", "--episode", "ticket=billing/0")
    assert_clean_error(missing, 1, 'no condition "ticket=billing"')
    assert 'next: poisson-prove inspect "' in missing.stderr
    assert_clean_error(prove("inspect", "--episode", "ticket=refund/999"), 1, "no replicate 999")
    assert_clean_error(prove("inspect", "--episode", "refund"), 2, "is not CONDITION/REPLICATE")
