"""`proveai baseline` and `proveai experiment`, run for real as console scripts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CLI, assert_clean_error
from tests.proveai.cli.run_kit import (
    _run_dir,
    replay_store,  # noqa: F401  (the `store` fixture)
)
from tests.proveai.replay.pipeline import run_pipeline


def test_baseline_and_experiment_lifecycle(proveai_cli: CLI, workdir: Path, store) -> None:
    created = proveai_cli("baseline", "create", "goods", "--filter", "outcome=good", env=store)
    assert created.returncode == 0, created.stderr
    assert created.stdout == "Wrote baseline 'goods' v1 — 3 trace(s) → proveai/baselines/goods.yaml\n"
    import yaml

    data = yaml.safe_load((workdir / "proveai" / "baselines" / "goods.yaml").read_text())
    assert data["version"] == 1 and len(data["trace_ids"]) == 3 and data["filter"] == {"outcome": "good"}
    assert_clean_error(proveai_cli("baseline", "create", "goods", env=store), 2, "already exists")
    assert_clean_error(proveai_cli("baseline", "create", "../x", env=store), 2, "invalid baseline name")
    run_pipeline("One more", root=workdir / "proveai" / "traces")
    refreshed = proveai_cli("baseline", "refresh", "goods", env=store)
    assert refreshed.stdout == "Refreshed baseline 'goods' v1 → v2 — 4 trace(s) (+1 −0)\n"
    listing = proveai_cli("baseline", "list", env=store)
    assert listing.stdout.startswith("goods  v2  4 trace(s)  outcome=good")
    shown = proveai_cli("baseline", "show", "goods@1", env=store)
    assert "baseline goods v1" in shown.stdout and shown.stdout.count("\n    ") == 3

    new = proveai_cli(
        "experiment",
        "new",
        "fix-qa",
        "--override",
        "qa_check=prompts/qa_v2.md",
        "--model",
        "draft=gpt-4o",
        env=store,
    )
    assert new.stdout == "Wrote experiment 'fix-qa' — 2 agent override(s) → proveai/experiments/fix-qa.yaml\n"
    (workdir / "prompts" / "qa_v2.md").write_text("changed after saving", encoding="utf-8")
    show = proveai_cli("experiment", "show", "fix-qa", env=store)
    assert "model: gpt-4o" in show.stdout and "Check the reply. Be strict." in show.stdout
    assert proveai_cli("experiment", "list", env=store).stdout.startswith(
        "fix-qa  overrides: draft, qa_check"
    )
    assert_clean_error(
        proveai_cli("experiment", "new", "empty", env=store), 2, "an experiment needs at least one override"
    )

    run = proveai_cli("run", "--baseline", "goods@1", "--experiment", "fix-qa", env=store)
    assert run.returncode in (0, 1), run.stderr
    assert "3 trace(s)" in run.stdout
    manifest = json.loads((_run_dir(workdir) / "manifest.json").read_text())
    assert manifest["baseline"] == {"name": "goods", "version": 1} and manifest["experiment"] == "fix-qa"
    assert manifest["overrides"]["draft"]["model"] == "gpt-4o"
    assert_clean_error(
        proveai_cli("run", "--baseline", "goods", "--filter", "outcome=good", env=store),
        2,
        "cannot be combined",
    )
