"""`proveai engine serve` / `health` as a user runs them, and the page's example as written."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.proveai.engine.engine_kit import (
    engine_fixture,  # noqa: F401  (fixture)
    engines_fixture,  # noqa: F401  (fixture)
    start_engine,
)

PAGE_EXAMPLE = """
from proveai import ProveAI, monitor, trace, on_detection

client = ProveAI(
    endpoint="http://localhost:19000",
    run_id="run-1",
    customer_id="acme",
    mas_name="research-pipeline",
)

@monitor("researcher", model="gpt-4o")
def researcher(q): return llm.invoke(q)

@monitor("synthesizer", parent_agent="researcher")
def synthesizer(r): return llm.invoke(f"Synthesize: {r}")

@on_detection(severity="critical", min_confidence=0.8)
def alert(response):
    for d in response.diagnoses:
        page_oncall(d.agent_name, d.root_cause)

with trace("research-pipeline") as t:
    r = researcher("AI safety")
    s = synthesizer(r)
    response = client.analyze(t)        # SSE-streamed 7-layer detection

if t.result.detected:
    fix = t.result.propagation[0].remediation
"""

STAND_INS = """
class _LLM:
    def invoke(self, prompt):
        return f"notes on {prompt}"

llm = _LLM()
paged = []
def page_oncall(agent, root_cause):
    paged.append((agent, root_cause))
"""

REPORT = """
print("detected", t.result.detected, "status", t.result.status)
print("layers", ",".join(layer.name for layer in t.result.layers))
print("paged", paged)
"""


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_the_page_example_runs_as_written_against_the_engine(workdir, home, engines):
    example = PAGE_EXAMPLE
    if port_is_free(19000):  # the page's own port when this machine has it free
        from tests.conftest import script_path

        process = subprocess.Popen([script_path("proveai"), "engine", "serve"], cwd=workdir,
                                   env=isolated_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
        first = process.stdout.readline()
        if "127.0.0.1:19000" not in first:  # lost a race for the port: fall back to a free one
            process.kill()
            process.communicate(timeout=10)
            engine = start_engine(workdir, home)
            example = example.replace("http://localhost:19000", engine.url.replace("127.0.0.1", "localhost"))
        else:
            from tests.proveai.engine.engine_kit import Engine

            engine = Engine(process, "http://127.0.0.1:19000", workdir / "proveai" / "traces", first)
    else:
        engine = start_engine(workdir, home)
        example = example.replace("http://localhost:19000", engine.url.replace("127.0.0.1", "localhost"))
    engines.append(engine)
    script = workdir / "example.py"
    script.write_text(STAND_INS + textwrap.dedent(example) + REPORT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=workdir, env=isolated_env(home),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        "detected False status suspect",
        "layers checks,errors,loops,path,judge,propagation",
        "paged []",
    ]
    stored = list((workdir / "proveai" / "traces").glob("*.detection.json"))
    assert len(stored) == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_the_engine_cleanly(engine, sig):
    code, out, err = engine.stop(sig)
    assert code == 0 and out == "proveai engine stopped\n"
    assert "Traceback" not in err and "error" not in err.lower()


def test_the_engine_listens_on_loopback_only(engine):
    port = int(engine.url.rsplit(":", 1)[1])
    listening = [
        line.split()[1] for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
        if line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A"
    ]
    assert listening == [f"0100007F:{port:04X}"]  # 127.0.0.1, never 0.0.0.0
    tcp6 = Path("/proc/net/tcp6")
    assert not tcp6.exists() or f":{port:04X} " not in tcp6.read_text()


def test_a_taken_port_is_one_error_line(engine, proveai_cli):
    port = engine.url.rsplit(":", 1)[1]
    done = proveai_cli("engine", "serve", "--port", port, timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert "next: proveai engine serve --port" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("args", [["--port", "70000"], ["--port", "x"], ["--judge-max", "0"]])
def test_bad_options_are_usage_errors(proveai_cli, args):
    done = proveai_cli("engine", "serve", *args, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stdout == ""


def test_health_command_against_a_running_and_a_missing_engine(engine, proveai_cli):
    up = proveai_cli("engine", "health", "--endpoint", engine.url)
    assert up.returncode == 0 and up.stderr == ""
    assert up.stdout.startswith(f"engine at {engine.url} is up: proveai ")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = proveai_cli("engine", "health", "--endpoint", f"http://127.0.0.1:{port}")
    assert down.returncode == 2 and down.stdout == ""
    lines = down.stderr.splitlines()
    assert lines[0].startswith(f"error: cannot reach the ProveAI engine at http://127.0.0.1:{port}")
    assert lines[1] == "next: start one: proveai engine serve" and len(lines) == 2


def test_serve_without_the_engine_extra_says_how_to_install_it(workdir, home):
    code = (
        "import sys; sys.modules['uvicorn'] = None\n"
        "from proveai.cli import main\nsys.exit(main(['engine', 'serve']))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=isolated_env(home),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: proveai engine serve needs the engine extra (uvicorn is not installed)",
        "next: pip install 'poisson-prove[engine]'",
    ]
