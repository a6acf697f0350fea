"""The replicate gate end to end over a noisy model server: unchanged code passes, the same
--seed gives the same result, a real prompt regression is caught."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.conftest import CLI, isolated_env
from tests.proveai.model_server import ModelServer, Request, fitness_probe
from tests.proveai.snapshot.kit import edit, make_project, run_pipeline, server_env

WRAPPERS = ("{a}", "Sure. {a}", "{a} Anything else?", "In short: {a}")
WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris", "juniper")


def core(text: str) -> str:
    """The answer without the paraphrase wrapping: what a careful reader compares."""
    text = text.strip()
    for prefix in ("Sure. ", "In short: "):
        text = text.removeprefix(prefix)
    return text.removesuffix(" Anything else?").strip()


def words(key: str, count: int = 3) -> str:
    digest = hashlib.sha256(key.encode()).digest()
    return " ".join(WORDS[b % len(WORDS)] for b in digest[:count])


def noisy_reply(request: Request) -> str | None:
    """Seeded noise: the wording varies with the seed, and 1 call in 10 gives a different answer."""
    if "You compare two outputs" in request.system:
        if fitness_probe(request) is not None:
            return None  # the server's own competent answer to proveai's known pairs
        user = request.messages[-1]["content"]
        old = re.search(r"OLD OUTPUT:\n(.*?)\n\nNEW OUTPUT:", user, re.DOTALL).group(1)
        new = re.search(r"NEW OUTPUT:\n(.*?)\n\nAnswer with", user, re.DOTALL).group(1)
        same = core(old) == core(new)
        verdict = {
            "verdict": "equivalent" if same else "worse",
            "confidence": 0.9,
            "rationale": "same answer, other words" if same else "a different answer",
        }
        return json.dumps(verdict)
    system = request.system
    user = core(str(request.messages[-1]["content"]))
    seed = str(request.body.get("seed"))
    noise = hashlib.sha256(f"{seed}|{system}|{user}".encode()).digest()
    answer = words(f"{system}|{user}")
    if noise[0] < 26:  # ~10%: the model samples another answer
        answer = words(f"{system}|{user}|alt")
    return WRAPPERS[noise[1] % len(WRAPPERS)].format(a=answer)


@pytest.fixture
def noisy_server():
    with ModelServer(mode="noisy") as server:
        server.reply_fn = noisy_reply
        yield server


def replicate_rows(project: Path, stdout: str) -> list[dict]:
    run_id = next(w for w in stdout.split() if w.startswith("verify-"))
    data = json.loads((project / "proveai" / "runs" / run_id / "verdicts.json").read_text(encoding="utf-8"))
    return data["replicates"]


def test_replicate_gate_over_a_noisy_model(tmp_path: Path, noisy_server: ModelServer, home: Path) -> None:
    project = tmp_path / "proj"
    make_project(project)
    env = server_env(noisy_server.openai_url)
    assert run_pipeline(project, isolated_env(home, env)).returncode == 0
    cli = CLI("proveai", project, home)

    init = cli("snapshot", "init", "--replicates", "6", env=env)
    assert init.returncode == 0, init.stderr
    assert "6 replicate(s)" in init.stdout
    pinned = json.loads((project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8"))
    assert len(pinned["captures"]) == 6
    # each replicate got its own seed through PROVEAI_SEED
    seeds = {r.body.get("seed") for r in noisy_server.chat_requests() if "seed" in r.body}
    assert len(seeds) >= 6

    first = cli("snapshot", "verify", "--replicates", "6", "--seed", "3", env=env)
    assert first.returncode == 0, (first.stdout, first.stderr)
    rows = replicate_rows(project, first.stdout)
    assert {r["agent"] for r in rows} == {"classify", "draft", "qa_check"}
    assert all(r["n_fresh"] == 6 and r["n_pinned"] == 6 for r in rows)
    assert "n=6" in first.stdout  # the per-agent distribution and its size are printed
    # a pass says how small a rise 6 replicates could have missed (Fisher, alpha 0.05 / 3 agents)
    assert "smallest failure-rate rise this test can detect" in first.stdout and "0 → 0.83" in first.stdout
    second = cli("snapshot", "verify", "--replicates", "6", "--seed", "3", env=env)
    assert second.returncode == 0
    assert replicate_rows(project, second.stdout) == rows  # same seed, same result

    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
    # without --replicates, verify uses as many replicates as the snapshot pins
    regressed = cli("snapshot", "verify", "--seed", "3", env=env)
    assert regressed.returncode == 1, (regressed.stdout, regressed.stderr)
    by_agent = {r["agent"]: r for r in replicate_rows(project, regressed.stdout)}
    assert by_agent["draft"]["fails"] and by_agent["draft"]["fresh_failing"] == 6
    assert by_agent["draft"]["n_fresh"] == 6
    assert not by_agent["classify"]["fails"]


def test_replicates_need_a_pinned_distribution(tmp_path: Path, noisy_server: ModelServer, home: Path) -> None:
    project = tmp_path / "proj"
    make_project(project)
    env = server_env(noisy_server.openai_url)
    assert run_pipeline(project, isolated_env(home, env)).returncode == 0
    cli = CLI("proveai", project, home)
    assert cli("snapshot", "init", env=env).returncode == 0
    refused = cli("snapshot", "verify", "--replicates", "5", env=env)
    assert refused.returncode == 2
    assert "error: snapshot 'latest' pins 1 capture" in refused.stderr
    assert "next: pin a distribution first: proveai snapshot init latest --replicates 5" in refused.stderr


def test_replicates_sample_the_model_not_the_response_cache(tmp_path: Path, home: Path) -> None:
    # a pipeline that passes no seed: with a response cache, every replicate after the first
    # would be served the first one's replies and the pinned noise would be zero
    project = tmp_path / "proj"
    edit(make_project(project), 'if os.environ.get("PROVEAI_SEED"):', "if False:")
    with ModelServer() as server:
        env = server_env(server.openai_url)
        assert run_pipeline(project, isolated_env(home, env)).returncode == 0
        cli = CLI("proveai", project, home)
        before = server.count("/v1/chat/completions")
        pinned = cli("snapshot", "init", "--replicates", "3", env=env)
        assert pinned.returncode == 0, pinned.stderr
        assert server.count("/v1/chat/completions") - before == 3 * 3  # 3 runs x 3 model calls
