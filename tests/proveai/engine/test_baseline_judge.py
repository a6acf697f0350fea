"""The baseline-driven layers (loops, path) and the opt-in judge, against a real engine process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proveai import FileExporter, ProveAI
from tests.proveai.engine import pipelines
from tests.proveai.engine.engine_kit import start_engine
from tests.proveai.model_server import ModelServer


@pytest.fixture
def project(workdir: Path, proveai_cli) -> Path:
    """A project whose store holds 4 clean runs, pinned as the baseline `good`."""
    store = workdir / "proveai" / "traces"
    for seed in range(4):
        pipelines.run("clean", seed=seed, exporters=[FileExporter(store)])
    made = proveai_cli("baseline", "create", "good", "--filter", "outcome=good")
    assert made.returncode == 0, made.stderr
    return workdir


def client(url: str) -> ProveAI:
    return ProveAI(endpoint=url, run_id="r", customer_id="c", mas_name="research-pipeline")


def test_loops_and_path_compare_with_the_baseline(project, home, engines):
    engine = start_engine(project, home, "--baseline", "good")
    engines.append(engine)
    assert "baseline: good@1 (4 trace(s))" in engine.banner

    looped = client(engine.url).analyze(pipelines.run("loop", seed=9))
    loop = next(d for d in looped.diagnoses if d.layer == "loops")
    assert loop.agent_name == "researcher" and loop.severity == "high" and loop.confidence == 1.0
    assert loop.evidence == (
        "ran 6 times; known-good runs (good@1) make at most 2; 6 calls had identical inputs"
    )
    assert looped.loops[0] == {"agent_name": "researcher", "iterations": 6, "usual": 2, "flagged": True}

    rerouted = client(engine.url).analyze(pipelines.run("path", seed=9))
    assert rerouted.detected and rerouted.propagation[0].agent_name == "researcher"
    path = next(d for d in rerouted.diagnoses if d.layer == "path")
    assert path.evidence == "researcher called web_scraper, which none of 4 known-good run(s) do"
    assert path.failure_modes == ("FM-2.3",)

    clean = client(engine.url).analyze(pipelines.run("clean", seed=11))
    assert not clean.detected and {x.name: x.status for x in clean.layers}["path"] == "clean"


def test_an_unknown_baseline_is_one_error_line(project, proveai_cli):
    done = proveai_cli("engine", "serve", "--port", "0", "--baseline", "nosuch", timeout=30)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and "nosuch" in done.stderr.splitlines()[0]


def test_the_judge_examines_flagged_agents_within_its_bound_and_is_cached(project, home, engines):
    with ModelServer(judge_verdict="worse") as models:
        models.judge_rationale = "the summary lost every citation"
        env = {"OPENAI_BASE_URL": models.openai_url, "OPENAI_API_KEY": "k",
               "PROVEAI_CACHE_DIR": str(home / "cache")}
        engine = start_engine(project, home, "--baseline", "good", "--judge-model", "gpt-4o-mini",
                              "--judge-max", "1", env=env)
        engines.append(engine)
        t = pipelines.run("check", seed=6)
        first = client(engine.url).analyze(t)
        judged = [d for d in first.diagnoses if d.layer == "judge"]
        got = [(d.agent_name, d.verdict, d.confidence) for d in judged]
        assert got == [("synthesizer", "judged worse", 0.9)]
        assert judged[0].evidence == "judge gpt-4o-mini: the summary lost every citation"
        assert judged[0].failure_modes == ("FM-1.1",)
        assert models.count("/v1/chat/completions") == 1
        system = models.chat_requests()[0].system
        assert system.startswith("You compare two outputs")

        again = client(engine.url).analyze(t)  # the same comparison: answered from the cache
        assert models.count("/v1/chat/completions") == 1
        assert [d.layer for d in again.diagnoses] == [d.layer for d in first.diagnoses]

        # two flagged agents, a bound of one: the most severe (the raising researcher) is judged
        crashed = client(engine.url).analyze(pipelines.run("exception", seed=7))
        stage = next(x for x in crashed.layers if x.name == "judge")
        assert models.count("/v1/chat/completions") == 2
        assert stage.summary.startswith("researcher: worse")
        assert "1 more flagged agent(s) not judged" in stage.summary
        assert crashed.propagation[0].agent_name == "researcher"
        stored = json.loads((engine.store / f"{t.trace_id}.detection.json").read_text())
        assert any(f["name"] == "judge" for f in stored["fired"])


def test_a_judge_that_cannot_answer_skips_without_hiding_the_other_findings(project, home, engines):
    with ModelServer() as models:
        models.reply_fn = lambda request: "I would rather not say."  # no JSON verdict at all
        env = {"OPENAI_BASE_URL": models.openai_url, "OPENAI_API_KEY": "k",
               "PROVEAI_CACHE_DIR": str(home / "cache")}
        engine = start_engine(project, home, "--baseline", "good", "--judge-model", "gpt-4o-mini", env=env)
        engines.append(engine)
        response = client(engine.url).analyze(pipelines.run("check", seed=8))
    stage = next(x for x in response.layers if x.name == "judge")
    assert stage.status == "clean" and "synthesizer: skip (judge skip: malformed judge reply" in stage.summary
    assert response.detected and response.propagation[0].agent_name == "synthesizer"
