"""A run planned by its spec's budget resumes at the replicates that budget bought (its resume was
refused as if the user had given --replicates), and --budget with --resume is a usage error."""

from __future__ import annotations

import json

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import seeded_spec


def test_a_budget_planned_run_resumes_to_its_own_replicates(prove, workdir) -> None:
    seeded_spec(workdir, replicates=200, extra="\n[local]\ncost_per_episode = 0.001\n")
    spec = workdir / "prove.toml"
    spec.write_text("budget = 0.5\n" + spec.read_text())
    stopped = prove("sweep", "--yes", "--max-mde", "1", "--max-rollouts", "10")
    assert stopped.returncode == 3, stopped.stderr
    (manifest_path,) = (workdir / "prove-runs").glob("*/manifest.json")
    planned = json.loads(manifest_path.read_text())["counts"]["planned"]
    assert planned == 500  # $0.50 at $0.001 an episode, over 2 conditions

    refused = prove("sweep", "--resume", "--yes", "--budget", "1")
    assert_clean_error(refused, 2, "--budget cannot be given with --resume: the run keeps its own replicates")

    resumed = prove("sweep", "--resume", "--yes")
    assert resumed.returncode == 0, resumed.stderr
    manifest = json.loads(manifest_path.read_text())
    assert manifest["status"] == "complete"
    assert manifest["counts"]["done"] == manifest["counts"]["planned"] == planned
