"""Opt-in: the sweep and the comparison against a real small model (`make test-real-model`).

scripts/real-model.sh serves SmolLM2-135M through llama-cpp-python on 127.0.0.1 and sets
PROVE_REAL_MODEL_URL. The rollout asks the model for a JSON object, as an agent would ask for a
tool call, and scores whether the reply parses. Two prompts are swept on the same seeds and
compared: the verdicts depend on the model, so the test asserts what must hold whatever it says
(whole runs, paired seeds, one verdict per condition, numbers that add up), not a direction.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

# A real model on two shared cores answers in seconds per call: the commands have their own 900 s
# bounds, and the test as a whole gets the time of two sweeps and a diff, not the suite's 300 s.
pytestmark = [pytest.mark.real_model, pytest.mark.timeout(2400)]

REAL_MODEL_URL = os.environ.get("PROVE_REAL_MODEL_URL", "")

ROLLOUT = '''
import json, os, re
import httpx
from poisson_prove import Episode

URL = os.environ["PROVE_REAL_MODEL_URL"].rstrip("/") + "/chat/completions"
PROMPT = open(os.path.join(os.path.dirname(__file__), "prompt.txt")).read()

def rollout(cfg, seed):
    reply = httpx.post(URL, json={
        "messages": [{"role": "user", "content": PROMPT + " City: " + cfg["city"]}],
        "temperature": cfg["temperature"], "seed": seed, "max_tokens": 48,
    }, timeout=60).json()
    text = reply["choices"][0]["message"]["content"]
    # llama.cpp can count one token past max_tokens (the end token); the horizon is max_tokens
    tokens = min(reply["usage"]["completion_tokens"], 48)
    match = re.search(r"\\{.*\\}", text, re.S)
    try:
        parsed = json.loads(match.group(0)) if match else None
    except ValueError:
        parsed = None
    if reply["choices"][0]["finish_reason"] == "length" and parsed is None:
        outcome = "rambled"
    elif isinstance(parsed, dict) and "country" in parsed:
        outcome = "ok"
    else:
        outcome = "malformed"
    return Episode(outcome=outcome, t=tokens, horizon=48, meta={"case_id": cfg["city"]})
'''

SPEC = """
target = "real_rollout:rollout"
target_id = "smollm2-json"
t_unit = "tokens"
replicates = 12

[axes.city]
type = "categorical"
values = ["Paris", "Tokyo"]

[axes.temperature]
type = "continuous"
values = [0.2, 1.0]

[declare]
outcomes = ["ok", "malformed", "rambled"]
failures = ["malformed", "rambled"]
"""


@pytest.mark.skipif(not REAL_MODEL_URL, reason="opt-in: make test-real-model serves the model")
def test_sweep_and_diff_against_a_real_model(prove, workdir: Path) -> None:
    (workdir / "real_rollout.py").write_text(ROLLOUT)
    (workdir / "real.toml").write_text(SPEC)
    env = {"PROVE_REAL_MODEL_URL": REAL_MODEL_URL, "PYTHONPATH": str(workdir)}

    (workdir / "prompt.txt").write_text('Reply with JSON {"country": ...} only.')
    first = prove("sweep", "real.toml", "--yes", "--max-mde", "0.95", env=env, timeout=900)
    assert first.returncode == 0, first.stderr
    (workdir / "prompt.txt").write_text(
        'You are a geography API. Answer with exactly one JSON object like {"country": "France"} '
        "and nothing else."
    )
    second = prove(
        "sweep", "real.toml", "--yes", "--max-mde", "0.95", "--pair-with", "latest", env=env, timeout=900
    )
    assert second.returncode == 0, second.stderr

    batches = sorted((workdir / "prove-runs").glob("*/episodes/*.parquet"))
    episodes = [row for path in batches for row in pq.read_table(path).to_pylist()]
    assert len(episodes) == 2 * 4 * 12
    by_run: dict[str, dict[tuple[str, int], int]] = {}
    for row in episodes:
        assert row["error_kind"] is None, row["error_message"]
        assert row["outcome"] in {"ok", "malformed", "rambled"}
        by_run.setdefault(row["run_id"], {})[(row["cell"], row["replicate"])] = row["seed"]
    seeds_a, seeds_b = by_run.values()
    assert seeds_a == seeds_b

    diff = prove("diff", "--json", env=env)
    assert diff.returncode == 0, diff.stderr
    document = json.loads(diff.stdout)
    assert document["paired"] is True or document.get("method", "").startswith("mcnemar"), document
    print(prove("diff", env=env).stdout)


class _RealServer:
    """The real model server, in the shape the snapshot kit expects of its fake one."""

    openai_url = REAL_MODEL_URL


@pytest.mark.skipif(not REAL_MODEL_URL, reason="opt-in: make test-real-model serves the model")
def test_snapshot_gate_against_a_real_model(project: Path, home: Path) -> None:
    """SmolLM2 as the pipeline's model and as its judge: the gate may call the judge unfit or
    decide, but it never passes a rude prompt silently and never blames unchanged code. The
    pipeline's calls name no temperature, so the server samples (its outputs differ on every
    run): an unchanged agent's new output is the model's variation, not a regression."""
    from tests.proveai.snapshot.kit import edit, pinned_project, verdicts_of

    cli, env = pinned_project(project, _RealServer(), home)
    unchanged = cli("snapshot", "verify", env=env, timeout=900)
    assert unchanged.returncode == 0, (unchanged.stdout, unchanged.stderr)
    assert "regressed" not in unchanged.stdout

    edit(project / "pipeline.py", "Draft a short, polite reply", "You are rude. Do not help.")
    changed = cli("snapshot", "verify", env=env, timeout=900)
    print(changed.stdout, changed.stderr)
    assert "Traceback" not in changed.stderr
    verdicts = verdicts_of(project, changed.stdout)
    draft = verdicts["draft"]
    # classify is above the edit: its output varies with the sampling, it is never blamed
    assert verdicts["classify"]["status"] != "regressed", verdicts["classify"]
    if changed.returncode == 0:
        # a pass is allowed only when it says what it did not check
        assert draft["status"] == "inconclusive" and "NOT checked" in changed.stdout, draft
    else:
        # the edited agent, or the one its reply feeds, is what failed the gate
        assert changed.returncode == 1, (changed.stdout, changed.stderr)
        regressed = {agent for agent, verdict in verdicts.items() if verdict["status"] == "regressed"}
        assert regressed and regressed <= {"draft", "qa_check"}, verdicts
