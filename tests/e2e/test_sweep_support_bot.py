"""The docs' support-bot flow, as a user runs it: dry-run, sweep, change the prompt, sweep
again paired with the first run, identical seeds, and the comparison's headline."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from tests.e2e.support_bot import PATCHED_PROMPTS, write_support_bot
from tests.poisson_prove.helpers import manifests


def _utc_day(created: str) -> str:
    return dt.datetime.fromisoformat(created.replace("Z", "+00:00")).astimezone(dt.UTC).date().isoformat()


PLAN = "plan 1,200 rollouts of support-bot: 6 cells x 200 replicates on local, $0 (local)"


def test_support_bot_flow(prove, workdir: Path) -> None:
    write_support_bot(workdir)

    dry = prove("sweep", "support.toml", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[:3] == [
        PLAN,
        "target my_rollout:rollout (imports, takes cfg and seed)",
        "outcomes failures: timeout, unresolved; successes: resolved",
    ]
    assert not (workdir / "prove-runs").exists()

    first = prove("sweep", "support.toml", "--yes")
    assert first.returncode == 0, first.stderr
    # The name is computed from the target_id and the UTC day the run was created (read back
    # from the manifest, so a flow that crosses midnight is checked just as well).
    (manifest_a,) = manifests(workdir / "prove-runs")
    day_a = _utc_day(manifest_a["created"])
    name_a = f"support-bot {day_a} a"
    assert manifest_a["name"] == name_a
    assert first.stdout.splitlines()[0] == PLAN
    assert f'done 1,200 rollouts in run "{name_a}" (complete) in ' in first.stdout

    (workdir / "prompts.py").write_text(PATCHED_PROMPTS)
    second = prove("sweep", "support.toml", "--yes", "--pair-with", "latest")
    assert second.returncode == 0, second.stderr
    manifest_b = manifests(workdir / "prove-runs")[1]
    day_b = _utc_day(manifest_b["created"])
    # The second run of a day takes the next letter; the first run of a new day starts at a.
    name_b = f"support-bot {day_b} {'b' if day_b == day_a else 'a'}"
    assert manifest_b["name"] == name_b
    assert manifest_b["paired_with"] == manifest_a["run_id"]
    assert manifest_b["salt"] == manifest_a["salt"]
    done = next(line for line in second.stdout.splitlines() if line.startswith("done "))
    assert done.startswith(f'done 1,200 rollouts in run "{name_b}" (complete) in ')
    assert done.endswith(f', paired with "{name_a}"')
    assert second.stdout.splitlines()[-1] == "next: poisson-prove diff"

    frame = pd.concat(
        [pd.read_parquet(p) for p in sorted((workdir / "prove-runs").glob("*/episodes/*.parquet"))]
    )
    # Run ids sort by second only; the manifests say which run came first.
    assert set(frame["run_id"].unique()) == {manifest_a["run_id"], manifest_b["run_id"]}
    a = frame[frame.run_id == manifest_a["run_id"]].set_index(["cell", "replicate"]).sort_index()
    b = frame[frame.run_id == manifest_b["run_id"]].set_index(["cell", "replicate"]).sort_index()
    assert len(a) == len(b) == 1200
    assert (a.index == b.index).all()
    assert (a["seed"] == b["seed"]).all()
    # The prompt change leaves fewer tickets unresolved on the same seeds.
    assert (b["outcome"] == "unresolved").sum() < (a["outcome"] == "unresolved").sum()

    diff = prove("diff")
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("safer "), diff.stdout
