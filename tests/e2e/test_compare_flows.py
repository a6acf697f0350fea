"""The docs' comparison flows end to end, with real sweeps through the installed script:
the example agent and its patch (a trade where tools fail most), the support bot's prompt
change (safer), and the mixed-case rollout (refused, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.conftest import assert_clean_error
from tests.e2e.support_bot import DECLARE, PATCHED_PROMPTS, write_file, write_support_bot

PATCHED = "poisson_prove.examples.mock_agent:rollout_patched"
EXAMPLE_SALT = "5eed00000000000000000000000000a1"


def _compared(home: Path) -> list[dict]:
    path = home / ".cache" / "poisson-prove" / "compared.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_example_agent_and_its_patch_trade_where_tools_fail_most(prove, workdir: Path, home: Path) -> None:
    assert prove("init", "--example").returncode == 0
    # A pinned salt makes the verdicts reproducible (the example shows this trade for >99% of salts).
    first = prove("sweep", "--yes", "--salt", EXAMPLE_SALT)
    assert first.returncode == 0, first.stderr
    second = prove("sweep", "--yes", "--target", PATCHED, "--pair-with", "latest")
    assert second.returncode == 0, second.stderr
    # In the order they were made (two runs may share a second, so not by folder name).
    manifests = sorted(
        (json.loads(p.read_text()) for p in (workdir / "prove-runs").glob("*/manifest.json")),
        key=lambda manifest: manifest["created_ns"],
    )
    runs = [manifest["run_id"] for manifest in manifests]
    names = [manifest["name"] for manifest in manifests]

    diff = prove("diff")
    assert diff.returncode == 0, diff.stderr
    assert diff.stderr == ""
    lines = diff.stdout.splitlines()
    assert lines[0].startswith("trade timeout: 0 safer, 1 worse · violated: ")
    assert " (paired test on shared seeds); 9 conditions by 20 tool calls, q 0.05" in lines[0]
    assert lines[1] == (
        "method paired test on shared seeds (McNemar), the default for runs paired at sweep time"
    )
    assert lines[2:4] == [f"before {names[0]}", f"after {names[1]}"]
    assert lines[4] == "trade task_id refund · tool_fail_rate 0.55: violated fell, timeout rose"
    assert not lines[5].startswith("trade ")
    assert "\x1b" not in diff.stdout
    assert "\ncoverage: every episode has an outcome (1,746 before, 1,746 after)\n" in diff.stdout

    gate = prove("check")
    assert gate.returncode == 4, gate.stderr
    assert gate.stdout == diff.stdout

    document = json.loads(prove("diff", "--json").stdout)
    trades = [c for c in document["conditions"] if c["verdict"] == "trade"]
    assert [(c["label"], c["fell"], c["rose"]) for c in trades] == [
        ("task_id refund · tool_fail_rate 0.55", ["violated"], ["timeout"])
    ]
    assert document["tests"] == 18 and document["headline"]["word"] == "trade"

    logged = _compared(home)
    assert [e["command"] for e in logged] == ["diff", "check", "diff"]
    assert all(e["headline"] == "trade" and e["after"]["done"] == 1746 for e in logged)

    inspected = prove("inspect")
    assert inspected.returncode == 0
    assert "no errors: every episode has an outcome" in inspected.stdout
    episode = prove("inspect", "--episode", "task_id=refund,tool_fail_rate=0.55/0")
    assert episode.returncode == 0, episode.stderr
    assert "condition   task_id refund · tool_fail_rate 0.55\n" in episode.stdout
    assert '"case_id": "refund"' in episode.stdout
    # started_at as stored (read back independently with pandas), in UTC with a Z
    batches = sorted((workdir / "prove-runs" / runs[1]).glob("episodes/*.parquet"))
    frame = pd.concat(pd.read_parquet(p) for p in batches)
    refund = frame.cell.str.contains('"refund"') & frame.cell.str.contains("0.55")
    stored = frame[refund & (frame.replicate == 0)]
    started = stored.started_at.iloc[0].isoformat().replace("+00:00", "Z")
    assert f"started_at  {started}\n" in episode.stdout


MIXED_ROLLOUT = """
from poisson_prove import Episode
from support_bot import TICKETS, handle


def rollout(cfg, seed):
    name = sorted(TICKETS)[seed % len(TICKETS)]  # the case picked from the seed: wrong
    reply = handle(TICKETS[name], temperature=cfg["temperature"], seed=seed)
    outcome = "timeout" if reply.timed_out else "resolved" if reply.resolved else "unresolved"
    return Episode(outcome=outcome, t=reply.steps, horizon=20, meta={"case_id": name})
"""
MIXED_TOML = """
target = "mixed_rollout:rollout"
target_id = "support-bot"
t_unit = "steps"
replicates = 200

[axes.temperature]
type = "continuous"
values = [0.0, 0.7]
""" + DECLARE


def test_support_bot_prompt_change_is_safer(prove, workdir: Path) -> None:
    write_support_bot(workdir)
    assert prove("sweep", "support.toml", "--yes").returncode == 0
    write_file(workdir, "prompts.py", PATCHED_PROMPTS)
    assert prove("sweep", "support.toml", "--yes", "--pair-with", "latest").returncode == 0

    diff = prove("diff")
    assert diff.returncode == 0, diff.stderr
    head = diff.stdout.splitlines()[0]
    assert head.startswith("safer unresolved: ") and " · timeout: " in head
    assert "(paired test on shared seeds); 6 conditions by 20 steps" in head
    document = json.loads(prove("check", "--json").stdout)
    assert document["exit_code"] == 0 and document["headline"]["word"] == "safer"
    counts = {c["outcome"]: c for c in document["headline"]["counts"]}
    assert counts["unresolved"]["safer"] >= 1 and counts["unresolved"]["worse"] == 0
    assert counts["timeout"]["worse"] == 0
    # the prompt does not touch timeouts: the paired twins time out together
    assert all(row["b"] == row["c"] == 0 for c in document["conditions"] for row in c["outcomes"]
               if row["outcome"] == "timeout")
    assert prove("check").returncode == 0


def test_mixed_cases_refused_and_nothing_written(prove, workdir: Path, home: Path) -> None:
    write_support_bot(workdir)
    write_file(workdir, "mixed_rollout.py", MIXED_ROLLOUT)
    write_file(workdir, "mixed.toml", MIXED_TOML)
    assert prove("--store", "mixed-runs", "sweep", "mixed.toml", "--yes").returncode == 0
    paired = prove("--store", "mixed-runs", "sweep", "mixed.toml", "--yes", "--pair-with", "latest")
    assert paired.returncode == 0, paired.stderr
    for verb in ("diff", "check"):
        result = prove("--store", "mixed-runs", verb)
        assert_clean_error(result, 1)
        assert result.stdout == ""
        assert result.stderr.splitlines() == [
            "error: condition temperature 0.0 ran 3 cases (password, refund, shipping); "
            "each case must be its own sweep axis",
            "next: make each case its own sweep axis in the spec, an [axes.<name>] table whose values "
            "are the cases, then sweep again",
        ]
    assert _compared(home) == []
