"""`check` on GitHub Actions, through the installed console script: the verdict table appended
to $GITHUB_STEP_SUMMARY, one `::warning` annotation per condition that got worse (on stderr,
only when GITHUB_ACTIONS=true), and neither ever changing the exit code or the report."""

from __future__ import annotations

import json
from pathlib import Path

from poisson_prove.store.runs import RunStore
from tests.poisson_prove.runs import store_with_pair


def test_summary_and_annotations_on_a_runner(prove, workdir: Path) -> None:
    store, a, b = store_with_pair(workdir)
    spec = workdir / "prove.toml"
    spec.write_text("# the after run's spec\n", encoding="utf-8")
    RunStore(store).open_run(RunStore(store).resolve(a.run_id)).update_manifest(spec_path=str(spec))
    summary = workdir / "summary.md"
    summary.write_text("an earlier step's summary\n", encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    worse = prove("check", b.name, a.name, "--max-mde", "0.3", "--json", env=env)
    assert worse.returncode == 4, worse.stderr
    assert json.loads(worse.stdout)["exit_code"] == 4  # stdout is still the one document
    assert worse.stderr.splitlines() == [
        "::warning file=prove.toml,title=poisson-prove check%3A ticket refund · temperature 0.0 worse::"
        "unresolved rose from 0.042 (5/118) [0.018, 0.095] to 0.424 (50/118) [0.338, 0.514] (q 4.5e-13): "
        f"{b.name} -> {a.name} (paired test on shared seeds)"
    ]
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("an earlier step's summary\n## poisson-prove check: worse (exit 4)\n")
    assert "| ticket refund · temperature 0.0 | worse | unresolved |" in text

    # Off a runner: no annotation; a summary that cannot be written is a warning, not a failure
    plain = prove("check", b.name, a.name, "--max-mde", "0.3", env={"GITHUB_STEP_SUMMARY": str(workdir)})
    assert plain.returncode == 4 and plain.stdout.startswith("worse unresolved")
    assert plain.stderr.startswith(f"warning: could not write $GITHUB_STEP_SUMMARY ({workdir})")
    assert "::" not in plain.stderr
