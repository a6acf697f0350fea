"""A failed episode's spans say where it went wrong, in `inspect RUN` (text and JSON), not only
in `inspect --episode`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.poisson_prove.helpers import write

AGENT = """
import os
import httpx
from poisson_prove import Episode, step

URL = os.environ["TOOL_URL"]

def rollout(cfg, seed):
    with step("plan"):
        pass
    with step("tools"):
        for n in range(3):
            with step("call tool"):
                r = httpx.get(f"{URL}/tool/{n}", timeout=5)
                if r.status_code == 503:
                    raise RuntimeError("tool unavailable")
                if r.status_code == 429:
                    return Episode("hit", n + 1, 3, {"case_id": "a"})
    return Episode("ok", 3, 3, {"case_id": "a"})
"""
SPEC = """
target = "agent:rollout"
target_id = "agent"
replicates = 30
[axes.x]
type = "categorical"
values = ["a"]
[declare]
outcomes = ["ok", "hit"]
failures = ["hit"]
successes = ["ok"]
[[chaos.faults]]
kind = "http_status"
status = 503
rate = 0.15
[[chaos.faults]]
kind = "http_status"
status = 429
rate = 0.15
"""


def test_inspect_run_shows_where_failed_episodes_went(prove: Any, workdir: Path, tool_server: Any) -> None:
    write(workdir, "agent.py", AGENT)
    write(workdir, "prove.toml", SPEC)
    env = {"TOOL_URL": tool_server.url}
    result = prove("sweep", "--yes", "--max-mde", "1", "--salt", "0badc0de", env=env)
    assert result.returncode == 0, result.stderr
    shown = prove("inspect")
    assert shown.returncode == 0, shown.stderr
    assert "where failed episodes went (from their spans)" in shown.stdout
    lines = shown.stdout.splitlines()
    error_line = next(line for line in lines if line.startswith("error RuntimeError"))
    assert "tools > call tool: RuntimeError: tool unavailable (after chaos http_status_503 on call" in (
        error_line
    )
    hit_line = next(line for line in lines if line.startswith("outcome hit"))
    assert "tools > call tool > chaos http_status_429 on call" in hit_line
    document = json.loads(prove("inspect", "--json").stdout)
    trails = {t["label"]: t for t in document["run"]["trails"]}
    assert set(trails) == {"error RuntimeError", "outcome hit"}
    errored = trails["error RuntimeError"]
    assert sum(n for _, n in errored["trails"]) == errored["episodes"]
