"""The library side: run_sweep in-process, seeds, rows, record/step spans, [capture]."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from tests.poisson_prove.helpers import SEEDED_TARGET, episodes, manifests, small_spec, write

STEPPING = """
from poisson_prove import Episode, record, step

def rollout(cfg, seed):
    with step("plan", task=cfg["x"]) as attrs:
        attrs["tokens"] = 12
        record("tool", name="search", ok=seed % 2 == 0)
    try:
        with step("act"):
            raise KeyError("missing")
    except KeyError:
        pass
    return Episode("ok", 2, 5, {"case_id": cfg["x"]})
"""


def test_run_sweep_in_process_with_record_and_step(tmp_path: Path) -> None:
    import poisson_prove

    write(tmp_path, "stepping.py", STEPPING)
    spec = small_spec(tmp_path, target="stepping:rollout", replicates=20)
    result = poisson_prove.run_sweep(spec, store=tmp_path / "runs", max_mde=0.5, batch_size=7)
    assert (result.verdict, result.status, result.done, result.errored) == ("done", "complete", 40, 0)
    assert result.exit_code == 0
    rows = episodes(tmp_path / "runs")
    (events,) = (tmp_path / "runs").glob("*/events.jsonl")
    kinds = [json.loads(line)["event"] for line in events.read_text().splitlines()]
    assert len(rows) == 40 and kinds.count("batch") == 6 and kinds.count("compact") == 1
    assert len(list((tmp_path / "runs").glob("*/episodes/*.parquet"))) == 1  # compacted
    spans = json.loads(rows[0]["spans"])
    assert [s["name"] for s in spans] == ["plan", "tool", "act"]
    plan, tool, act = spans
    assert plan["attributes"] == {"task": "a", "tokens": 12} and plan["parent"] is None
    assert tool["parent"] == 0 and tool["start"] == tool["end"]
    assert act["status"] == "error" and act["error"] == "KeyError: 'missing'"
    assert plan["start"] <= tool["start"] <= plan["end"]
    table = poisson_prove.load_run("latest", store=tmp_path / "runs")
    assert table.num_rows == 40
    # record/step outside a sweep do nothing and raise nothing.
    poisson_prove.record("alone")
    with poisson_prove.step("alone") as attrs:
        attrs["x"] = 1


def test_run_sweep_refuses_an_underpowered_design(tmp_path: Path) -> None:
    import poisson_prove

    write(tmp_path, "agent.py", SEEDED_TARGET)
    spec = small_spec(tmp_path, replicates=20)
    with pytest.raises(poisson_prove.ProveError) as caught:
        poisson_prove.run_sweep(spec, store=tmp_path / "runs")
    assert caught.value.message.startswith("underpowered design")
    assert not (tmp_path / "runs").exists()


def test_rows_to_table_reads_every_started_at_form() -> None:
    from poisson_prove.store.table import rows_to_table

    moment = dt.datetime(2026, 10, 26, 12, 0, 1, 500000, tzinfo=dt.UTC)
    base = {"run_id": "r", "cell": "{}", "cfg": "{}", "replicate": 0, "seed": 1}
    rows = [
        {**base, "started_at": moment.timestamp()},
        {**base, "started_at": moment},
        {**base, "started_at": moment.isoformat()},
    ]
    table = rows_to_table(rows)
    assert table.column("started_at").to_pylist() == [moment] * 3


INSTRUMENTOR = """
from opentelemetry import trace

class FakeInstrumentor:
    is_instrumented_by_opentelemetry = False

    def instrument(self, tracer_provider=None, **kwargs):
        import fake_client
        fake_client.TRACER = trace.get_tracer("fake", tracer_provider=tracer_provider)
        self.is_instrumented_by_opentelemetry = True
"""
CLIENT = """
TRACER = None

def call(prompt):
    if TRACER is None:
        return "answer"
    with TRACER.start_as_current_span("chat fake-model") as span:
        span.set_attribute("gen_ai.request.model", "fake-model")
        span.set_attribute("gen_ai.prompt", prompt)
        span.set_attribute("fake.note", "x" * 100)
        return "answer"
"""
TRACED = """
import fake_client
from poisson_prove import Episode

def rollout(cfg, seed):
    fake_client.call(f"secret prompt {seed}")
    return Episode("ok", 1, 5, {"case_id": cfg["x"]})
"""


def test_capture_switches_on_named_instrumentors_and_names_missing_ones(prove, workdir: Path) -> None:
    plugins = workdir / "plugins"
    dist = plugins / "fake_instrumentor-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-instrumentor\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[opentelemetry_instrumentor]\nfake = fake_instrumentor:FakeInstrumentor\n"
    )
    write(plugins, "fake_instrumentor.py", INSTRUMENTOR)
    write(plugins, "fake_client.py", CLIENT)
    write(workdir, "agent.py", TRACED)
    capture = '[capture]\ninstrument = ["fake", "absent"]\ncontent = false\nmax_observation_bytes = 16\n'
    small_spec(workdir, replicates=20, values=["a"], extra=capture)
    path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH", "")) if p)
    result = prove("sweep", "--yes", "--max-mde", "0.5", env={"PYTHONPATH": path})
    assert result.returncode == 0, result.stderr
    assert "capture fake, absent (not installed: no spans); installed: " in result.stdout
    assert "capture without spans from absent (not installed" in result.stdout
    (manifest,) = manifests(workdir / "prove-runs")
    assert list(manifest["capture"]["missing"]) == ["absent"]
    spans = json.loads(episodes(workdir / "prove-runs")[0]["spans"])
    (span,) = spans
    assert span["name"] == "chat fake-model" and span["source"] == "otel"
    assert "gen_ai.prompt" not in span["attributes"]  # content = false
    assert span["attributes"]["gen_ai.request.model"] == "fake-model"
    assert "fake.note" not in span["attributes"]  # not on the content = false allow-list


def test_latest_is_the_last_run_made_even_within_one_second(tmp_path: Path) -> None:
    import poisson_prove
    from poisson_prove.store.runs import RunStore

    write(tmp_path, "agent.py", SEEDED_TARGET)
    spec = small_spec(tmp_path, replicates=20, values=["a"])
    names = []
    for _ in range(4):
        result = poisson_prove.run_sweep(spec, store=tmp_path / "runs", max_mde=0.5, pair_with=None)
        names.append(result.name)
        assert RunStore(tmp_path / "runs").resolve("latest").name == result.name
    assert [m["name"] for m in manifests(tmp_path / "runs")][-1] == names[-1]
    assert [r.name for r in RunStore(tmp_path / "runs").runs()] == names


SWITCHING = """
import sys
from poisson_prove import Episode

def rollout(cfg, seed):
    return Episode("ok", 1, 5, {"case_id": cfg["x"], "interval": repr(sys.getswitchinterval())})
"""


def test_episodes_run_beside_the_writer_with_quick_gil_handoffs_and_the_interval_comes_back(
    tmp_path: Path,
) -> None:
    import sys

    import poisson_prove
    from poisson_prove.sweep.batches import HANDOFF_INTERVAL_S

    write(tmp_path, "switching.py", SWITCHING)
    spec = small_spec(tmp_path, target="switching:rollout", replicates=20)
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        poisson_prove.run_sweep(spec, store=tmp_path / "runs", max_mde=0.5, batch_size=7)
        assert sys.getswitchinterval() == pytest.approx(0.005)  # put back after the episodes
        seen = {json.loads(row["meta"])["interval"] for row in episodes(tmp_path / "runs")}
        assert [float(text) for text in seen] == [pytest.approx(HANDOFF_INTERVAL_S)]
        sys.setswitchinterval(0.0001)  # a caller's own shorter interval is never raised
        poisson_prove.run_sweep(spec, store=tmp_path / "shorter", max_mde=0.5, batch_size=7)
        seen = {json.loads(row["meta"])["interval"] for row in episodes(tmp_path / "shorter")}
        assert [float(text) for text in seen] == [pytest.approx(0.0001, abs=1e-6)]
        assert sys.getswitchinterval() == pytest.approx(0.0001, abs=1e-6)
    finally:
        sys.setswitchinterval(before)
