"""`sweep --budget` through the installed console script (dry runs: nothing is spent)."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.stats.power import replicates_needed
from tests.poisson_prove.helpers import small_spec, write

AGENT = "def rollout(cfg, seed):\n    return {'outcome': 'resolved', 't': 1}\n"
OWN_COST = "\n[local]\ncost_per_episode = 0.01\n"


def test_budget_sizes_the_run_and_says_what_it_detects(prove, workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=20, extra=OWN_COST)
    result = prove("sweep", "--dry-run", "--json", "--budget", "40", "--max-mde", "0.3")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    budget = document["budget"]
    assert budget["replicates"] == 2000 and budget["fits"]  # $40 / (2 conditions x $0.01)
    assert 2000 in {document.get("replicates"), document.get("plan", {}).get("replicates")}
    assert budget["detectable_rise"] < 0.3
    text = prove("sweep", "--dry-run", "--budget", "40", "--max-mde", "0.3")
    assert f"with $40.00 you can detect a rise of {budget['detectable_rise']:.3f} at the worst base rate" in (
        text.stdout
    )


def test_a_budget_that_cannot_reach_max_mde_is_refused(prove, workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=20, extra=OWN_COST)
    result = prove("sweep", "--dry-run", "--budget", "0.5", "--max-mde", "0.3")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    needed = replicates_needed(2, 1, max_mde=0.3)
    assert f"(--replicates {needed}) detects a rise of 0.300" in result.stderr


def test_budget_in_the_spec(prove, workdir: Path) -> None:
    write(workdir, "agent.py", AGENT)
    small_spec(workdir, replicates=20, extra=OWN_COST)
    spec = workdir / "prove.toml"
    spec.write_text("budget = 40\n" + spec.read_text())
    result = prove("sweep", "--dry-run", "--json", "--max-mde", "0.3")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["budget"]["replicates"] == 2000
    spec.write_text(spec.read_text().replace("budget = 40", "budget = -1"))
    bad = prove("sweep", "--dry-run")
    assert bad.returncode == 1 and "budget must be a positive number of dollars" in bad.stderr
    assert "Traceback" not in bad.stderr


EPISODE_AGENT = (
    "from poisson_prove import Episode\n"
    "def rollout(cfg, seed):\n    return Episode(outcome='ok', t=1, horizon=20)\n"
)


def test_a_budgeted_run_records_its_budget_and_the_dashboard_shows_it(prove, workdir: Path) -> None:
    write(workdir, "agent.py", EPISODE_AGENT)
    small_spec(workdir, replicates=20, extra=OWN_COST)
    result = prove("sweep", "--yes", "--budget", "8", "--max-mde", "0.6")
    assert result.returncode == 0, result.stderr
    (manifest_path,) = (workdir / "prove-runs").glob("*/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    budget = manifest["budget"]
    assert budget["budget_usd"] == 8 and budget["replicates"] == manifest["replicates"] == 400
    assert manifest["cost_usd"] == 8  # the estimate counts the own cost per episode, as the budget does
    page = prove("dashboard")
    assert page.returncode == 0, page.stderr
    html = (workdir / "prove-runs" / "dashboard.html").read_text()
    assert f"(budget $8.00, detects a rise of {budget['detectable_rise']:.3f})" in html


COUNTED_IMPORT = """
with open({log!r}, "a") as handle:
    handle.write("imported\\n")

def rollout(cfg, seed):
    raise AssertionError("--dry-run must not call the rollout")
"""


def test_a_budget_re_plans_without_checking_the_target_again(prove, workdir: Path, tmp_path: Path) -> None:
    log = tmp_path / "imports.log"
    write(workdir, "agent.py", COUNTED_IMPORT.format(log=str(log)))
    small_spec(workdir, replicates=20, extra=OWN_COST)
    result = prove("sweep", "--dry-run", "--json", "--budget", "40", "--max-mde", "0.3")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plan"]["replicates"] == 2000  # re-planned at what $40 buys
    assert log.read_text().splitlines() == ["imported"]  # the import check ran once
