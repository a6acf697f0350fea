"""Planted failures against a real engine process: the right root cause, a clean run not flagged,
detections written beside the trace and listed by `proveai status --filter detection=flagged`."""

from __future__ import annotations

import json

import pytest

from proveai import AnalyzeResponse, ProveAI
from tests.proveai.engine import pipelines


def client(url: str) -> ProveAI:
    return ProveAI(endpoint=url, run_id="run-1", customer_id="acme", mas_name="research-pipeline")


@pytest.mark.parametrize(
    ("mode", "root", "layer", "mode_code", "downstream"),
    [
        ("loop", "researcher", "loops", "FM-1.3", ["synthesizer"]),
        ("check", "synthesizer", "checks", "FM-1.1", []),
        ("exception", "researcher", "errors", "FM-3.1", ["synthesizer"]),
    ],
)
def test_a_planted_failure_is_traced_to_the_agent_it_was_planted_in(
    engine, proveai_cli, mode, root, layer, mode_code, downstream
):
    t = pipelines.run(mode, seed=3)
    response = client(engine.url).analyze(t)

    assert isinstance(response, AnalyzeResponse) and t.result is response
    assert response.detected and response.status == "flagged"
    first = response.propagation[0]
    assert (first.agent_name, first.role, first.root_cause_agent) == (root, "root_cause", root)
    assert mode_code in first.failure_modes and first.remediation[mode_code]
    assert response.remediation == first.remediation
    affected = [(p.agent_name, p.parent_agent) for p in response.propagation[1:]]
    assert affected == [(a, root) for a in downstream]
    assert {d.root_cause_agent for d in response.diagnoses} == {root}
    assert any(d.layer == layer and d.agent_name == root for d in response.diagnoses)
    assert all(root in d.root_cause for d in response.diagnoses)

    # the detection beside the trace, read back with json, and the store's own listing
    detection = json.loads((engine.store / f"{t.trace_id}.detection.json").read_text())
    assert detection["status"] == "flagged" and detection["trace_id"] == t.trace_id
    assert {f["agent"] for f in detection["fired"] if f.get("source") == "engine"} == {root, *downstream}
    assert json.loads((engine.store / f"{t.trace_id}.json").read_text())["resourceSpans"]
    listed = proveai_cli("status", "--filter", "detection=flagged", "--traces", str(engine.store))
    assert listed.returncode == 0, listed.stderr
    assert t.trace_id in listed.stdout and "flagged" in listed.stdout and listed.stderr == ""


def test_a_clean_pipeline_is_not_flagged(engine, proveai_cli):
    t = pipelines.run("clean", seed=1)
    assert t.outcome == "good"
    response = client(engine.url).analyze(t)

    assert not response.detected and response.status == "clean"
    assert response.diagnoses == () and response.propagation == () and response.remediation == {}
    statuses = {layer.name: layer.status for layer in response.layers}
    assert statuses == {"checks": "clean", "errors": "clean", "loops": "clean", "path": "skipped",
                        "judge": "skipped", "propagation": "clean"}
    detection = json.loads((engine.store / f"{t.trace_id}.detection.json").read_text())
    assert detection["status"] == "clean" and detection["fired"] == []
    flagged = proveai_cli("status", "--filter", "detection=flagged", "--traces", str(engine.store))
    assert flagged.returncode == 0 and t.trace_id not in flagged.stdout
    clean = proveai_cli("status", "--filter", "detection=clean", "--traces", str(engine.store))
    assert t.trace_id in clean.stdout


def test_a_trace_without_checks_or_failures_stays_suspect_not_clean(engine):
    from proveai import trace

    with trace("bare") as t:
        pipelines.planner("tidal power")
    response = client(engine.url).analyze(t)
    assert not response.detected and response.status == "suspect"
    assert response.layers[0].status == "skipped" and "no checks" in response.layers[0].summary


def test_analyze_batch_returns_one_response_per_trace_in_order(engine, proveai_cli):
    traces = [pipelines.run(mode, seed=i) for i, mode in enumerate(("clean", "loop", "check", "clean"))]
    responses = client(engine.url).analyze_batch(traces)

    assert [r.trace_id for r in responses] == [t.trace_id for t in traces]
    assert [r.detected for r in responses] == [False, True, True, False]
    assert [r.propagation[0].agent_name for r in responses if r.detected] == ["researcher", "synthesizer"]
    assert all(t.result is r for t, r in zip(traces, responses, strict=True))
    for t, r in zip(traces, responses, strict=True):
        stored = json.loads((engine.store / f"{t.trace_id}.detection.json").read_text())
        assert stored["status"] == r.status
    listed = proveai_cli("status", "--filter", "detection=flagged", "--traces", str(engine.store))
    assert sum(t.trace_id in listed.stdout for t in traces) == 2


def test_a_trace_already_in_the_store_keeps_its_file_and_gets_the_engine_detection(engine, proveai_cli):
    from proveai import FileExporter

    t = pipelines.run("loop", seed=2, exporters=[FileExporter(engine.store)])
    before = (engine.store / f"{t.trace_id}.json").read_bytes()
    captured = json.loads((engine.store / f"{t.trace_id}.detection.json").read_text())
    assert captured["status"] == "flagged"  # the capture-time check already failed

    client(engine.url).analyze(t)
    assert (engine.store / f"{t.trace_id}.json").read_bytes() == before
    after = json.loads((engine.store / f"{t.trace_id}.detection.json").read_text())
    assert any(f.get("name") == "loops" and f["agent"] == "researcher" for f in after["fired"])
    outcomes = (engine.store / "outcomes.jsonl").read_text().splitlines()
    assert sum(json.loads(row)["source"] == "composite" for row in outcomes) == 1  # not appended twice


def test_result_is_none_until_the_trace_is_analyzed(engine):
    t = pipelines.run("clean", seed=4)
    assert t.result is None
    client(engine.url).analyze(t)
    assert t.result is not None and t.result.trace_id == t.trace_id


def test_an_exception_re_raised_by_its_caller_is_blamed_on_the_agent_that_raised(engine):
    from proveai import monitor, trace

    @monitor("fetcher", kind="TOOL")
    def fetcher(url: str) -> str:
        raise TimeoutError(f"{url} did not answer")

    @monitor("orchestrator")
    def orchestrator(task: str) -> str:
        return fetcher(f"https://example.invalid/{task}")  # not caught: the caller fails too

    with trace("nested") as t:
        try:
            orchestrator("prices")
        except TimeoutError:
            pass
    response = client(engine.url).analyze(t)
    links = [(p.agent_name, p.role, p.parent_agent) for p in response.propagation]
    assert links == [("fetcher", "root_cause", None), ("orchestrator", "propagated", "fetcher")]
    verdicts = {d.agent_name: (d.verdict, d.severity, d.caused_by) for d in response.diagnoses}
    assert verdicts == {
        "fetcher": ("raised", "critical", None), "orchestrator": ("re-raised", "high", "fetcher"),
    }
    assert response.execution_flags == ("exception:fetcher",)


def test_an_unwritable_store_costs_the_write_not_the_analysis(engines, workdir, home):
    import os

    from tests.proveai.engine.engine_kit import start_engine

    if os.geteuid() == 0:  # root writes through permission bits: use a file where the folder should be
        blocked = workdir / "blocked"
        blocked.write_text("not a folder")
        store = blocked / "traces"
    else:
        store = workdir / "ro"
        store.mkdir()
        store.chmod(0o500)
    engine = start_engine(workdir, home, "--traces", str(store))
    engines.append(engine)
    response = client(engine.url).analyze(pipelines.run("loop", seed=1))
    assert response.detected and response.stored is None
    assert any(flag.startswith(f"store: could not write to {store}") for flag in response.execution_flags)


def test_concurrent_analyses_all_land_in_the_store(engine, proveai_cli):
    from concurrent.futures import ThreadPoolExecutor

    traces = [pipelines.run(("loop", "clean")[i % 2], seed=i) for i in range(12)]
    with ThreadPoolExecutor(6) as pool:
        responses = list(pool.map(client(engine.url).analyze, traces))
    assert [r.detected for r in responses] == [i % 2 == 0 for i in range(12)]
    listed = proveai_cli("status", "--filter", "detection=flagged", "--limit", "100",
                         "--traces", str(engine.store))
    assert sorted(line.split()[0] for line in listed.stdout.splitlines() if "flagged" in line) == sorted(
        t.trace_id for t in traces[::2]
    )
    index = json.loads((engine.store / "manifest.json").read_text())
    assert set(index) == {t.trace_id for t in traces}
