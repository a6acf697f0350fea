"""[capture] checks: proveai checks run on each @monitor call of a sweep episode, their labels
stored on the agent's span as `proveai.check.<name>` (spec-time refusals:
tests/poisson_prove/design/test_spec_checks.py)."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pyarrow.parquet as pq

CHECKS = '''
def short_output(trace):
    """good when every output of the call is under 40 characters"""
    return all(len(str(span.output)) < 40 for span in trace.spans)


def boom(trace):
    raise RuntimeError("this check fails to run")
'''


def _spec(workdir: Path, checks: str) -> None:
    text = (workdir / "prove.toml").read_text(encoding="utf-8")
    (workdir / "prove.toml").write_text(f"{text}\n[capture]\nchecks = {checks}\n", encoding="utf-8")


def test_each_agent_call_carries_the_labels_of_the_checks_that_apply_to_it(prove, workdir) -> None:
    assert prove("init", "--example", "pipeline").returncode == 0
    (workdir / "mychecks.py").write_text(CHECKS, encoding="utf-8")
    _spec(workdir, '["json_valid@draft", "mychecks:short_output", "mychecks:boom@qa_check"]')
    done = prove("sweep", "--yes", "--replicates", "20", "--max-mde", "1", "--store", "store")
    assert done.returncode == 0, done.stderr
    files = sorted(glob.glob(str(workdir / "store" / "*" / "episodes" / "*.parquet")))
    rows = [json.loads(text) for f in files for text in pq.read_table(f).column("spans").to_pylist()]
    assert len(rows) == 60
    seen = {}
    for spans in rows:
        for span in spans:
            labels = {k: v for k, v in span["attributes"].items() if k.startswith("proveai.check.")}
            seen.setdefault(span["name"], []).append(labels)
    # the pipeline's own trace labels json_valid on draft too; the spec's check agrees with it
    for labels in seen["draft"]:
        assert set(labels) == {"proveai.check.json_valid", "proveai.check.short_output"}
        assert labels["proveai.check.short_output"] == "bad"  # a draft is longer than 40 characters
    assert {labels["proveai.check.json_valid"] for labels in seen["draft"]} <= {"good", "bad"}
    for labels in seen["classify"]:  # json_valid@draft does not apply to classify
        assert labels == {"proveai.check.short_output": "good"}
    for labels in seen["qa_check"]:  # a check that raises labels the call skip, the episode goes on
        assert labels == {"proveai.check.short_output": "good", "proveai.check.boom": "skip"}
    (manifest,) = glob.glob(str(workdir / "store" / "*" / "manifest.json"))
    assert json.loads(Path(manifest).read_text(encoding="utf-8"))["capture"]["checks"] == [
        "json_valid@draft", "mychecks:short_output", "mychecks:boom@qa_check",
    ]

