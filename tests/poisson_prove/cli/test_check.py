"""`check`, the CI gate, through the installed console script on runs in a store."""

from __future__ import annotations

import json
from pathlib import Path

from tests.poisson_prove.runs import store_with_pair


def test_check_exits_4_when_a_failure_rose_and_0_otherwise(prove, workdir: Path) -> None:
    _store, a, b = store_with_pair(workdir, after_unresolved=5)
    safer = prove("check")
    assert safer.returncode == 0 and safer.stdout.startswith("safer ")
    assert safer.stdout == prove("diff").stdout
    worse = prove("check", b.name, a.name)  # the same pair the other way round
    assert worse.returncode == 4, worse.stderr
    assert worse.stdout.startswith("worse unresolved: 0 safer, 1 worse")
    assert worse.stderr == ""
    as_json = prove("check", b.name, a.name, "--json")
    assert as_json.returncode == 4 and json.loads(as_json.stdout)["exit_code"] == 4
