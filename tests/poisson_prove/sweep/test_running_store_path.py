"""The store is found once, when the sweep starts: a rollout that changes the working folder
(os.chdir) does not move a relative `--store`, nor the default ./prove-runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.poisson_prove.helpers import episodes, small_spec, write

AGENT = """
import os
from poisson_prove import Episode

def rollout(cfg, seed):
    os.chdir("/")
    return Episode("ok", 1, 5, {"case_id": cfg["x"]})
"""


def test_a_rollout_that_changes_folder_does_not_move_the_store(prove, workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=20)
    swept = prove("--store", "ST", "sweep", "--yes", "--max-mde", "1", "--batch-size", "7", "--json")
    assert swept.returncode == 0, swept.stderr
    assert "Traceback" not in swept.stderr
    assert json.loads(swept.stdout)["counts"]["done"] == 40
    rows = episodes(workdir / "ST")
    assert len(rows) == len({(r["cell"], r["replicate"]) for r in rows}) == 40
    (manifest,) = [json.loads(p.read_text()) for p in (workdir / "ST").glob("*/manifest.json")]
    assert manifest["status"] == "complete" and manifest["counts"]["done"] == 40
