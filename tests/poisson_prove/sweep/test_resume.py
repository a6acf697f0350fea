"""Resuming a run through the installed script: the target its manifest names is imported only
once the user's spec or --target confirms it."""

from __future__ import annotations

import json
import shlex

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import SEEDED_TARGET, small_spec, write

EVIL = """
import pathlib
pathlib.Path("PWNED").write_text("the manifest's target ran")
def rollout(cfg, seed):
    raise SystemExit("never")
"""


def test_resume_imports_only_a_target_the_user_confirms(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    write(workdir, "evilmod.py", EVIL)
    small_spec(workdir, replicates=20)
    stopped = prove("sweep", "--yes", "--max-mde", "1", "--name", "a", "--max-rollouts", "10")
    assert stopped.returncode == 3, stopped.stderr
    (run,) = (workdir / "prove-runs").glob("*/manifest.json")
    manifest = json.loads(run.read_text())
    run.write_text(json.dumps({**manifest, "target": "evilmod:rollout"}))
    result = prove("sweep", "--resume", "--yes")
    assert_clean_error(
        result, 1, "would import the target evilmod:rollout named in its manifest", "names agent:rollout"
    )
    assert 'next: poisson-prove sweep --resume "a" --target evilmod:rollout' in result.stderr
    assert_clean_error(prove("sweep", "--resume", "--yes", "--target", "agent:rollout"), 2, "does not match")
    assert not (workdir / "PWNED").exists()
    # The user's own --target confirms it (here: the real target, restored).
    run.write_text(json.dumps(manifest))
    (workdir / "prove.toml").unlink()  # nothing left to confirm the manifest's target with
    refused = prove("sweep", "--resume", "--yes")
    assert_clean_error(refused, 1, "cannot be read to confirm it")
    confirmed = prove("sweep", "--resume", "--yes", "--target", "agent:rollout")
    assert confirmed.returncode == 0, confirmed.stderr
    assert not (workdir / "PWNED").exists()


def test_the_next_resume_line_carries_the_spec_and_target_the_sweep_was_given(prove, workdir) -> None:
    """A run swept from another spec with --target is resumed by its `next:` line as printed (a
    bare `sweep --resume` would read ./prove.toml, which names no such target, and be refused)."""
    second = "\n\ndef rollout_b(cfg, seed):\n    return rollout(cfg, seed)\n"
    write(workdir, "agent.py", SEEDED_TARGET + second)
    small_spec(workdir, replicates=20, name="other spec.toml")
    stopped = prove(
        "sweep", "other spec.toml", "--target", "agent:rollout_b", "--yes", "--max-mde", "1",
        "--max-rollouts", "10", "--name", "agent 2026-12-01 a",
    )
    assert stopped.returncode == 3, stopped.stderr
    expected = (
        "next: poisson-prove sweep 'other spec.toml' --resume 'agent 2026-12-01 a' --target agent:rollout_b"
    )
    assert expected in stopped.stdout.splitlines() + stopped.stderr.splitlines()
    argv = shlex.split(expected.removeprefix("next: poisson-prove "))
    resumed = prove(*argv, "--yes")
    assert resumed.returncode == 0, resumed.stderr
    (run,) = (workdir / "prove-runs").glob("*/manifest.json")
    manifest = json.loads(run.read_text())
    assert manifest["status"] == "complete" and manifest["target"] == "agent:rollout_b"
