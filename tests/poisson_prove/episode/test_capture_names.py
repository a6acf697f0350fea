"""[capture] instrument names as people type them, through the installed `poisson-prove`: an
instrumentor named by its package (`openai-v2`, `opentelemetry-instrumentation-openai-v2`) gets
its entry point's name as a did-you-mean (in the plan, the done line and the manifest), and the
reason lists the names installed (in the plan once, in the done line and the manifest)."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from tests.poisson_prove.helpers import write

AGENT = """
import os, httpx
from poisson_prove import Episode

def rollout(cfg, seed):
    httpx.get(os.environ["TOOL_URL"] + "/tool/0", timeout=5)
    return Episode("ok", 1, 5)
"""
SPEC = """
target = "agent:rollout"
target_id = "agent"
replicates = 4
[axes.x]
type = "categorical"
values = ["a"]
[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
[capture]
instrument = {instrument}
max_observation_bytes = 256
"""


def _project(workdir: Path, instrument: list[str]) -> None:
    write(workdir, "agent.py", AGENT)
    (workdir / "prove.toml").write_text(SPEC.format(instrument=json.dumps(instrument)), encoding="utf-8")


def _installed() -> dict[str, str]:
    """entry point name -> the distribution that provides it, read from the installed metadata."""
    return {ep.name: ep.dist.name for ep in entry_points(group="opentelemetry_instrumentor") if ep.dist}


def _capture_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("capture "))


def test_an_instrumentor_named_by_its_package_gets_its_entry_point_name(
    prove: Any, workdir: Path, tool_server: Any
) -> None:
    installed = _installed()
    assert installed["openai"] == "opentelemetry-instrumentation-openai-v2"  # the agent extra
    assert installed["httpx"] == "opentelemetry-instrumentation-httpx"
    names = ", ".join(sorted(installed))
    packages = ["opentelemetry-instrumentation-openai-v2", "opentelemetry-instrumentation-httpx"]
    _project(workdir, ["openai-v2", *packages])
    plan = prove("sweep", "--dry-run", "--max-mde", "1", env={"TOOL_URL": tool_server.url})
    assert plan.returncode == 0, plan.stderr
    assert "Traceback" not in plan.stderr
    assert _capture_line(plan.stdout) == (
        'capture openai-v2 (not installed: no spans; did you mean "openai"?), '
        'opentelemetry-instrumentation-openai-v2 (not installed: no spans; did you mean "openai"?), '
        'opentelemetry-instrumentation-httpx (not installed: no spans; did you mean "httpx"?); '
        f"installed: {names}; content left out, values up to 256 bytes"
    )

    result = prove("sweep", "--yes", "--max-mde", "1", "--store", "runs", env={"TOOL_URL": tool_server.url})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    done = next(i for i, line in enumerate(lines) if line.startswith("done "))
    assert lines[done + 1].startswith(
        "capture without spans from openai-v2 (not installed (no opentelemetry_instrumentor entry point "
        "named 'openai-v2', did you mean \"openai\"?; installed: "
    )
    manifest = json.loads(next((workdir / "runs").glob("*/manifest.json")).read_text())
    missing = manifest["capture"]["missing"]
    assert 'did you mean "openai"?' in missing["opentelemetry-instrumentation-openai-v2"]
    assert 'did you mean "httpx"?' in missing["opentelemetry-instrumentation-httpx"]


def test_a_name_nothing_is_close_to_lists_the_installed_instrumentors(
    prove: Any, workdir: Path, tool_server: Any
) -> None:
    names = ", ".join(sorted(_installed()))
    why = f"not installed (no opentelemetry_instrumentor entry point named 'zzzz'; installed: {names})"
    _project(workdir, ["httpx", "zzzz"])
    plan = prove("sweep", "--dry-run", "--max-mde", "1", env={"TOOL_URL": tool_server.url})
    assert plan.returncode == 0, plan.stderr
    assert _capture_line(plan.stdout) == (
        f"capture httpx, zzzz (not installed: no spans); installed: {names}; "
        "content left out, values up to 256 bytes"
    )
    as_json = prove("sweep", "--dry-run", "--json", "--max-mde", "1", env={"TOOL_URL": tool_server.url})
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["capture"]["missing"] == {"zzzz": why}

    result = prove("sweep", "--yes", "--max-mde", "1", "--store", "runs", env={"TOOL_URL": tool_server.url})
    assert result.returncode == 0, result.stderr
    assert f"capture without spans from zzzz ({why})" in result.stdout.splitlines()
    manifest = json.loads(next((workdir / "runs").glob("*/manifest.json")).read_text())
    assert manifest["capture"]["missing"] == {"zzzz": why}
