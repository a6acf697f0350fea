"""snapshot/replicates.py, the runs: N real re-runs of a recorded command, each into its own traces
folder, with their own seeds; progress before each run and once at the end; a run that writes
no trace is an error quoting its output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.replicates import capture_replicates
from proveai.snapshot.rerun import replicate_seed

# no model: one monitored agent that echoes the seed verify hands the pipeline
PIPELINE = """
import os
from proveai import FileExporter, monitor, trace

@monitor("echo")
def echo(text):
    return text + " " + os.environ.get("PROVEAI_SEED", "-")

with trace("tiny", exporters=[FileExporter()]):
    echo("seed")
"""


def _invocation(script: str) -> dict:
    return {"argv": [script], "script": script, "cwd": ".", "python": sys.executable}


def test_each_replicate_is_a_fresh_trace_with_its_own_seed(tmp_path: Path) -> None:
    (tmp_path / "pipeline.py").write_text(PIPELINE, encoding="utf-8")
    seen: list[tuple[int, int]] = []
    traces = capture_replicates(
        _invocation("pipeline.py"), count=3, seed=7, stream="verify", timeout_s=60,
        trace_name="tiny", root=tmp_path, keep_dir=tmp_path / "kept",
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]
    outputs = [t.spans_named("echo")[0].output for t in traces]
    assert outputs == [f"seed {replicate_seed(7, 'verify', i)}" for i in range(3)]
    kept = sorted((tmp_path / "kept").glob("*.json"))
    assert [p.name[:4] for p in kept] == ["000-", "001-", "002-"]
    assert [p.name[4:-len(".json")] for p in kept] == [t.trace_id for t in traces]
    assert all(json.loads(p.read_text(encoding="utf-8")) for p in kept)  # whole JSON documents
    assert not (tmp_path / "proveai").exists()  # the user's own store is never written


def test_a_run_without_a_trace_quotes_its_output(tmp_path: Path) -> None:
    broken = "print('starting')\nraise SystemExit('no model key')\n"
    (tmp_path / "broken.py").write_text(broken, encoding="utf-8")
    with pytest.raises(ProveAIError) as refused:
        capture_replicates(
            _invocation("broken.py"), count=2, seed=None, stream="verify", timeout_s=60, trace_name=None,
            root=tmp_path,
        )
    assert refused.value.exit_code == ProveAIExit.USAGE
    assert "the pipeline (broken.py) exited 1 and wrote no trace" in refused.value.message
    assert "no model key" in refused.value.message
