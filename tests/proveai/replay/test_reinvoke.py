"""`proveai run` re-executes an agent that calls its model with plain httpx (no proveai provider)
by re-invoking its captured function when an upstream override changed its input, or says per
agent why it could not. The pipeline runs for real as a child process against the model server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import CLI, isolated_env
from tests.proveai.model_server import ModelServer

AGENTS = '''"""Two agents: classify calls its model through proveai; draft with plain httpx."""
import os

import httpx
import pytest

from proveai import monitor
from proveai.providers import dispatch

MODEL = "gpt-4o-mini"


@monitor("classify", model=MODEL)
def classify(ticket: str) -> str:
    messages = [{"role": "system", "content": "Classify the ticket."}, {"role": "user", "content": ticket}]
    return dispatch(MODEL).call(messages, MODEL, temperature=0).text


@monitor("draft", parent_agent="classify", model=MODEL)
def draft(category: str, tone: str = "polite") -> str:
    # the README's llm.invoke shape: the model is called directly, not through a proveai provider
    body = {"model": MODEL, "temperature": 0,
            "messages": [{"role": "user", "content": f"Write a {tone} reply about: {category}"}]}
    reply = httpx.post(os.environ["MODEL_URL"] + "/chat/completions", json=body, timeout=10)
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]
'''

PIPELINE = '''import sys

from proveai import FileExporter, trace

from agents import classify, draft

with trace("support", exporters=[FileExporter("proveai/traces")]):
    draft(classify(sys.argv[1]))
'''

CODE_CHANGED = "code of agents:draft changed since the trace was captured"
SRC = str(Path(__file__).resolve().parents[3] / "src")


def _project(workdir: Path, model_server: ModelServer, home: Path) -> dict[str, str]:
    """A user project holding the pipeline; two traces captured by running it as a child process."""
    (workdir / "pyproject.toml").write_text('[project]\nname = "support"\nversion = "0"\n', encoding="utf-8")
    (workdir / "agents.py").write_text(AGENTS, encoding="utf-8")
    (workdir / "pipeline.py").write_text(PIPELINE, encoding="utf-8")
    prompt = "Classify the ticket. Prefer the word 'refund'."
    (workdir / "classify_v2.md").write_text(prompt, encoding="utf-8")
    env = {
        "PROVEAI_PROVIDER_PATTERN": "gpt-*,claude-*",
        "PROVEAI_PROVIDER_BASE_URL": model_server.openai_url,
        "PROVEAI_CACHE_DIR": str(workdir.parent / "cache"),
        "MODEL_URL": model_server.openai_url,
        "PYTHONPATH": SRC,
    }
    for ticket in ("My order arrived broken", "Where is my parcel?"):
        done = subprocess.run(
            [sys.executable, "pipeline.py", ticket], cwd=workdir, env=isolated_env(home, env),
            capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
    return env


def _run_dir(workdir: Path) -> Path:
    return max((workdir / "proveai" / "runs").iterdir())


def _drafts(run_dir: Path) -> list[dict]:
    verdicts = json.loads((run_dir / "verdicts.json").read_text(encoding="utf-8"))
    traces = verdicts["traces"] if isinstance(verdicts, dict) else verdicts
    return [s for t in traces for s in t["replayed_spans"] if s["agent"] == "draft"]


def _draft_verdicts(run_dir: Path) -> list[dict]:
    verdicts = json.loads((run_dir / "verdicts.json").read_text(encoding="utf-8"))
    traces = verdicts["traces"] if isinstance(verdicts, dict) else verdicts
    return [v for t in traces for v in t["verdicts"] if v["child"] == "draft"]


def test_an_httpx_agent_is_re_executed_with_its_new_input(
    proveai_cli: CLI, workdir: Path, home: Path, model_server: ModelServer
) -> None:
    env = _project(workdir, model_server, home)
    captured = [r for r in model_server.chat_requests() if "Write a polite reply" in str(r.messages)]
    assert len(captured) == 2
    result = proveai_cli("run", "--override", "classify=classify_v2.md", env=env)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    assert "note: draft: re-executed 2 time(s) by calling its captured function" in result.stderr
    run_dir = _run_dir(workdir)
    new_classify = [r for r in model_server.chat_requests() if "Prefer the word 'refund'." in r.system]
    assert len(new_classify) == 2
    drafts = _drafts(run_dir)
    assert len(drafts) == 2 and all(s["reinvoked"] and s["live"] and s["inputs_changed"] for s in drafts)
    # each re-executed draft sent its new input to the model over httpx and kept the new reply
    asked = [r.messages[-1]["content"] for r in model_server.chat_requests()[len(captured) + 2 :]]
    new_categories = {s["inputs"]["category"] for s in drafts}
    assert len(new_categories) == 2
    verdicts = {v["span_id"]: v for v in _draft_verdicts(run_dir)}
    for span in drafts:
        prompt = f"Write a polite reply about: {span['inputs']['category']}"
        assert prompt in asked
        assert "agents:draft" in span["note"]
        verdict = verdicts[span["span_id"]]
        # the new output is what the model answers to the new prompt (asked again, independently)
        body = {"model": "gpt-4o-mini", "temperature": 0, "messages": [{"role": "user", "content": prompt}]}
        again = httpx.post(model_server.openai_url + "/chat/completions", json=body, timeout=10).json()
        assert verdict["new_output"] == again["choices"][0]["message"]["content"]
        assert verdict["new_output"] != verdict["old_output"]
        assert verdict["change"] == "downstream" and verdict["status"] != "unchanged"
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["reinvoked"] == {"draft": 2} and metrics["not_reexecuted"] == {}
    # --no-reinvoke: no agent code runs; the run says so per agent
    before = len(model_server.chat_requests())
    off = proveai_cli("run", "--override", "classify=classify_v2.md", "--no-reinvoke", env=env)
    assert off.returncode in (0, 1), off.stderr
    assert "warning: draft: inputs changed upstream but it was not re-executed (re-invoking" in off.stderr
    assert not any("Write a polite" in str(r.messages) for r in model_server.chat_requests()[before:])
    runs = (workdir / "proveai" / "runs").iterdir()
    manifests = [json.loads((d / "manifest.json").read_text(encoding="utf-8")) for d in runs]
    assert sorted(m["reinvoke"] for m in manifests) == [False, True]


def test_an_agent_that_cannot_be_re_executed_says_why(
    proveai_cli: CLI, workdir: Path, home: Path, model_server: ModelServer
) -> None:
    env = _project(workdir, model_server, home)
    source = (workdir / "agents.py").read_text(encoding="utf-8")
    (workdir / "agents.py").write_text(source.replace("timeout=10", "timeout=20"), encoding="utf-8")
    before = len(model_server.chat_requests())
    result = proveai_cli("run", "--override", "classify=classify_v2.md", env=env)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    assert (
        "warning: draft: inputs changed upstream but it was not re-executed: the code of agents:draft "
        "changed since the trace was captured; recorded output kept" in result.stderr
    )
    fresh = model_server.chat_requests()[before:]
    assert not any("Write a polite reply" in str(r.messages) for r in fresh)  # draft never ran
    run_dir = _run_dir(workdir)
    assert all(not s["reinvoked"] and not s["live"] for s in _drafts(run_dir))
    verdicts = _draft_verdicts(run_dir)
    assert [v["status"] for v in verdicts] == ["drifted", "drifted"]
    assert all(CODE_CHANGED in v["rationale"] for v in verdicts)
    assert CODE_CHANGED in (run_dir / "report.html").read_text(encoding="utf-8")
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["reinvoked"] == {} and "code of agents:draft changed" in metrics["not_reexecuted"]["draft"]


def _verify_rows(workdir: Path, stdout: str) -> dict[str, dict]:
    run_id = next(w for w in stdout.split() if w.startswith("verify-"))
    data = json.loads((workdir / "proveai" / "runs" / run_id / "verdicts.json").read_text(encoding="utf-8"))
    return {v["agent"]: v for v in data["verdicts"]}


def test_snapshot_verify_override_re_executes_the_httpx_agent(
    proveai_cli: CLI, workdir: Path, home: Path, model_server: ModelServer
) -> None:
    env = _project(workdir, model_server, home)
    pinned = proveai_cli("snapshot", "init", env=env)
    assert pinned.returncode == 0, pinned.stderr
    (snapshot_file,) = (workdir / "proveai" / "snapshots").glob("[!.]*.json")  # not the local trust record
    snapshot = json.loads(snapshot_file.read_text(encoding="utf-8"))
    assert snapshot["agents"]["draft"]["function"] == "agents:draft"
    before = len(model_server.chat_requests())
    result = proveai_cli("snapshot", "verify", "--override", "classify=classify_v2.md", env=env)
    assert "Traceback" not in result.stderr, result.stderr
    rows = _verify_rows(workdir, result.stdout)
    assert rows["classify"]["change"] == "direct edit"
    assert rows["draft"]["change"] == "downstream" and rows["draft"]["status"] != "unchanged", rows["draft"]
    fresh = model_server.chat_requests()[before:]
    assert any("Write a polite reply about:" in str(r.messages) for r in fresh)  # draft's httpx call ran
    # the same what-if with draft's code edited: not re-executed, and the verdict says why
    source = (workdir / "agents.py").read_text(encoding="utf-8")
    (workdir / "agents.py").write_text(source.replace("timeout=10", "timeout=20"), encoding="utf-8")
    edited = proveai_cli("snapshot", "verify", "--override", "classify=classify_v2.md", env=env)
    assert "Traceback" not in edited.stderr, edited.stderr
    draft = _verify_rows(workdir, edited.stdout)["draft"]
    assert draft["status"] == "inconclusive" and CODE_CHANGED in draft["rationale"], draft


CASES = '''from dataclasses import dataclass

from proveai import monitor


@dataclass
class Order:
    id: str
    qty: int


class Opaque:
    pass


@monitor("total")
def total(order: Order, factor: int = 2) -> int:
    return order.qty * factor


@monitor("opaque")
def opaque(thing) -> str:
    return "seen"


@monitor("stream")
def stream(n: int):
    yield from range(n)


def factory():
    @monitor("inner")
    def inner(x: str) -> str:
        return x
    return inner
'''


def test_each_reason_a_function_cannot_be_re_invoked(tmp_path: Path, monkeypatch) -> None:
    """In-process: real captured spans of a real module, re-invoked or refused with a reason."""
    from proveai import trace
    from proveai.replay.reinvoke import NotReinvokable, reinvoke
    from proveai.traces.jsonsafe import VALUE_BOUND

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (tmp_path / "cases_mod.py").write_text(CASES, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import cases_mod

    with trace("cases") as t:
        cases_mod.total(cases_mod.Order("A-1", 3))
        cases_mod.opaque(cases_mod.Opaque())
        list(cases_mod.stream(2))
        cases_mod.factory()("x")
        cases_mod.opaque("y" * (VALUE_BOUND + 10))
    spans = {s.name: s for s in reversed(t.spans)}  # the first span of each agent
    assert spans["total"].function == "cases_mod:total"
    # a dataclass argument is rebuilt from its captured dict; defaults are passed as captured
    assert reinvoke(spans["total"], {"order": {"id": "A-1", "qty": 5}, "factor": 2}).output == 10

    def reason(name: str, inputs: dict, span=None) -> str:
        with pytest.raises(NotReinvokable) as caught:
            reinvoke(span or spans[name], inputs)
        return str(caught.value)

    assert "was captured as <cases_mod.Opaque object at 0x" in reason("opaque", spans["opaque"].inputs)
    assert "is a generator" in reason("stream", {"n": 3})
    assert "defined inside another function" in reason("inner", {"x": "z"})
    truncated = t.spans[-1]
    assert "'thing' was truncated when it was captured" in reason("opaque", truncated.inputs, truncated)
    assert "argument 'order' was not captured" in reason("total", {})
    from dataclasses import replace

    main = replace(spans["total"], function="__main__:total")
    assert "(__main__), which cannot be imported" in reason("total", {}, main)
    elsewhere = replace(spans["total"], function="json:dumps")
    assert "module 'json' is not importable from the project root" in reason("total", {}, elsewhere)
    other = replace(spans["total"], function="cases_mod:factory")
    assert "cases_mod:factory is not the @monitor agent 'total'" in reason("total", {}, other)
    renamed = replace(spans["total"], name="opaque")
    assert "is not the @monitor agent 'opaque'" in reason("total", {}, renamed)
    edited = replace(spans["total"], code_hash="sha256:" + "0" * 64)
    assert "the code of cases_mod:total changed" in reason("total", {"order": {"id": "a", "qty": 1}}, edited)
    raising = {"order": {"id": "A-1", "qty": "many"}, "factor": None}
    assert "re-invoking cases_mod:total raised TypeError" in reason("total", raising)
