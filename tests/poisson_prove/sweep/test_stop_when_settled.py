"""`sweep --pair-with RUN --stop-when-settled` on real sweeps of a rollout whose failure rate the
test controls: a large rise stops early and diff says worse with the sequential method; no
change runs to the plan; what stopped where is read back from the manifest and events."""

from __future__ import annotations

import html
import json
from pathlib import Path

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import episodes, small_spec, write

# BAD_RATE sets the failure rate; FRESH_DRAW=1 draws the outcome from a later random number of
# the same seed, so twins are independent at the same rate (discordant pairs, no change).
TARGET = """
import os, random
from poisson_prove import Episode

RATE = float(os.environ.get("BAD_RATE", "0.3"))
FRESH = os.environ.get("FRESH_DRAW") == "1"

def rollout(cfg, seed):
    rng = random.Random(seed)
    if FRESH:
        rng.random()
    return Episode("bad" if rng.random() < RATE else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""
REPLICATES = 200
SALT = "5eed5a17"
SETTLED = ("--yes", "--max-mde", "0.9", "--pair-with", "latest", "--stop-when-settled", "--batch-size", "20")


def _before(prove, workdir: Path) -> None:
    write(workdir, "agent.py", TARGET)
    small_spec(workdir, replicates=REPLICATES)
    # A fixed salt: the seeds, and so every verdict below, are the same on every run of the test.
    first = prove("sweep", "--yes", "--max-mde", "0.9", "--salt", SALT, env={"BAD_RATE": "0.3"})
    assert first.returncode == 0, first.stderr


def _run_dir(workdir: Path, name: str) -> Path:
    for manifest in (workdir / "prove-runs").glob("*/manifest.json"):
        if json.loads(manifest.read_text())["name"] == name:
            return manifest.parent
    raise AssertionError(name)


def test_a_large_rise_stops_early_and_diff_says_worse_sequentially(prove, workdir: Path) -> None:
    _before(prove, workdir)
    swept = prove("sweep", *SETTLED, "--json", env={"BAD_RATE": "0.8"})
    assert swept.returncode == 0, swept.stderr
    document = json.loads(swept.stdout)
    counts = document["counts"]
    assert counts["planned"] == 2 * REPLICATES
    assert counts["done"] < counts["planned"] and counts["saved"] > 0
    assert counts["done"] + counts["saved"] == counts["planned"]
    assert document["run"]["status"] == "complete"
    assert "stopped when settled" in document["sentence"] and "planned rollouts saved" in document["sentence"]

    run = _run_dir(workdir, document["run"]["name"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["counts"]["settled_skipped"] == counts["saved"]
    block = manifest["sequential"]
    assert block["stop_when_settled"] and block["settled"] == 2
    assert block["alpha"] == manifest["design"]["alpha"]
    for entry in block["conditions"].values():
        assert entry["reason"] == "settled" and entry["stopped_at"] < REPLICATES
        assert entry["looks"][-1] == entry["stopped_at"] and entry["look"] == len(entry["looks"])
        assert entry["outcomes"]["bad"]["direction"] == "rose"
        assert entry["replicates_run"] >= entry["stopped_at"]
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    settled = [e for e in events if e["event"] == "settled"]
    assert {e["cell"] for e in settled} == set(block["conditions"])
    assert all(e["skipped"] == REPLICATES - e["stopped_at"] for e in settled)
    assert events[-1]["event"] == "done" and events[-1]["saved"] == counts["saved"]

    diff = prove("diff")
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("worse bad: 0 safer, 2 worse (group-sequential paired test")
    assert "sequential p-values from the" in diff.stdout and "--stop-when-settled" in diff.stdout
    as_json = json.loads(prove("diff", "--json").stdout)
    assert as_json["headline"]["word"] == "worse"
    assert as_json["method_phrase"] == "group-sequential paired test on shared seeds"
    assert as_json["sequential"]["looks"] == {k: e["looks"] for k, e in block["conditions"].items()}
    for condition in as_json["conditions"]:
        (row,) = condition["outcomes"]
        recorded = block["conditions"][condition["key"]]["outcomes"]["bad"]["p"]
        assert row["p"] == recorded  # the diff recomputes the sweep's own sequential p
        assert row["p"] <= block["alpha"] and row["verdict"] == "rose"
        assert row["p_exact"] < 1e-3  # the fixed test on all stored pairs stays beside it
    check = prove("check")
    assert check.returncode == 4, check.stdout + check.stderr

    made = prove("dashboard")
    assert made.returncode == 0, made.stderr
    page = html.unescape((workdir / "prove-runs" / "dashboard.html").read_text())
    assert '<p class="gate" data-gate="worse">check at --max-mde 0.900: worse (exit 4)' in page
    saved = f"{counts['saved']:,} of 400 planned rollouts saved"
    assert f"stopped when settled (--stop-when-settled): {saved}" in page
    for entry in block["conditions"].values():
        where = f"stopped after {entry['stopped_at']} of {REPLICATES} replicates"
        assert f"condition {entry['label']}: {where}" in page

    listed = prove("runs")
    assert listed.returncode == 0 and "complete, settled" in listed.stdout

    stored = episodes(workdir / "prove-runs", document["run"]["id"])
    assert len(stored) == counts["done"]
    again = prove("sweep", "--resume", document["run"]["name"], "--yes")
    assert_clean_error(again, 1, "stopped when settled", "nothing to resume")
    assert len(episodes(workdir / "prove-runs", document["run"]["id"])) == counts["done"]


def test_no_change_runs_to_the_plan_and_says_no_change(prove, workdir: Path) -> None:
    _before(prove, workdir)
    swept = prove("sweep", *SETTLED, "--json", env={"BAD_RATE": "0.3", "FRESH_DRAW": "1"})
    assert swept.returncode == 0, swept.stderr
    document = json.loads(swept.stdout)
    assert document["counts"]["done"] == 2 * REPLICATES and document["counts"]["saved"] == 0
    block = document["sequential"]
    assert block["settled"] == 0
    for entry in block["conditions"].values():
        assert entry["reason"] == "planned replicates reached"
        assert entry["looks"][-1] == REPLICATES and len(entry["looks"]) >= 5
    as_json = json.loads(prove("diff", "--json").stdout)
    assert as_json["headline"]["word"] == "no change"
    assert as_json["sequential"] is not None
    for condition in as_json["conditions"]:
        (row,) = condition["outcomes"]
        assert row["b"] + row["c"] > 20  # real discordant pairs, tested sequentially
        assert row["verdict"] == "no change"


def test_a_partial_settling_run_resumes_with_its_looks_and_rule(prove, workdir: Path) -> None:
    _before(prove, workdir)
    first = prove("sweep", *SETTLED, "--max-rollouts", "60", "--json", env={"BAD_RATE": "0.8"})
    assert first.returncode == 3, first.stderr  # stopped by --max-rollouts: partial
    started = json.loads(first.stdout)
    assert started["run"]["status"] == "partial"
    assert {e["reason"] for e in started["sequential"]["conditions"].values()} == {"still running"}
    looks_then = [e["looks"] for e in started["sequential"]["conditions"].values()]
    resumed = prove("sweep", "--resume", "--yes", "--batch-size", "20", env={"BAD_RATE": "0.8"})
    assert resumed.returncode == 0, resumed.stderr
    assert "stopped when settled" in resumed.stdout
    manifest = json.loads((_run_dir(workdir, started["run"]["name"]) / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["counts"]["settled_skipped"] > 0
    for entry, before in zip(manifest["sequential"]["conditions"].values(), looks_then, strict=True):
        assert entry["reason"] == "settled" and entry["looks"][: len(before)] == before
    assert len(episodes(workdir / "prove-runs", started["run"]["id"])) == manifest["counts"]["done"]


def test_stop_when_settled_needs_pair_with(prove, workdir: Path) -> None:
    write(workdir, "agent.py", TARGET)
    small_spec(workdir, replicates=REPLICATES)
    refused = prove("sweep", "--yes", "--max-mde", "0.9", "--stop-when-settled")
    assert_clean_error(refused, 2, "--stop-when-settled needs --pair-with")
    assert "next: poisson-prove sweep --pair-with latest --stop-when-settled" in refused.stderr
    assert refused.stdout == ""
    assert not (workdir / "prove-runs").exists()
