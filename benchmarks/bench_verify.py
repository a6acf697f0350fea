"""Verify's cost against the pipeline it re-runs, measured side by side in one run.

A three-agent pipeline (one model call each, through proveai's cached_dispatch) talks to a
fake OpenAI-compatible server on 127.0.0.1 that answers after a fixed latency (a stand-in
for a real model). Printed:

1. wall time of `proveai snapshot verify` (response cache off, as in a fresh CI runner)
   divided by the wall time of running the pipeline itself (goal: within 1.5x);
2. the model requests the server received during a second verify of unchanged code with
   the response cache on (goal: 0), for that pipeline and for the same pipeline calling
   plain `dispatch(model)` (served from the response cache under PROVEAI_VERIFY=1).

Run: .venv/bin/python benchmarks/bench_verify.py [--latency 0.2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.proveai.model_server import ModelServer  # noqa: E402
from tests.proveai.snapshot.kit import PIPELINE, git, server_env  # noqa: E402

BIN = Path(sys.executable).parent


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return elapsed


def make_project(project: Path, *, cached: bool) -> Path:
    """The three-agent pipeline in a fresh git repository, through cached_dispatch or not."""
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n', encoding="utf-8")
    source = PIPELINE
    if cached:
        source = PIPELINE.replace(
            "from proveai import FileExporter, dispatch, monitor, trace",
            "from proveai import FileExporter, monitor, trace\n"
            "from proveai.cache import cached_dispatch as dispatch",
        )
    (project / "pipeline.py").write_text(source, encoding="utf-8")
    git(project, "init", "-q", "-b", "main")
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake model takes per call")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp, ModelServer() as server:
        latency = args.latency

        def slow(request):  # the default deterministic answer, after the model's latency
            time.sleep(latency)
            return None

        server.reply_fn = slow
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PROVEAI_", "GITHUB_")) and k != "CI"}
        env.update(
            server_env(server.openai_url),
            HOME=tmp,
            XDG_CACHE_HOME=f"{tmp}/.cache",
            PROVEAI_CACHE_DIR=f"{tmp}/response-cache",
        )
        cold = {**env, "PROVEAI_NO_CACHE": "1"}
        pipeline = [sys.executable, "pipeline.py"]
        verify = [str(BIN / "proveai"), "snapshot", "verify"]
        project = make_project(Path(tmp) / "proj", cached=True)
        timed(pipeline, project, cold)
        timed([str(BIN / "proveai"), "snapshot", "init"], project, env)

        pipeline_s, verify_s = [], []
        for _ in range(args.repeats):  # interleaved, so machine noise hits both alike
            pipeline_s.append(timed(pipeline, project, cold))
            verify_s.append(timed(verify, project, cold))
        ratio = statistics.median(verify_s) / statistics.median(pipeline_s)

        def second_verify_calls(project: Path) -> int:
            timed(pipeline, project, env)  # fill the response cache once
            timed([str(BIN / "proveai"), "snapshot", "init"], project, env)
            timed(verify, project, env)
            before = server.count("/v1/chat/completions")
            timed(verify, project, env)
            return server.count("/v1/chat/completions") - before

        second_calls = second_verify_calls(project)
        plain_calls = second_verify_calls(make_project(Path(tmp) / "plain", cached=False))

    print(f"pipeline alone        median {statistics.median(pipeline_s):.2f} s over {args.repeats} run(s)")
    print(f"snapshot verify       median {statistics.median(verify_s):.2f} s (response cache off)")
    print(f"verify / pipeline     {ratio:.2f}x   (goal <= 1.5x; model latency {args.latency:g} s/call)")
    print(f"model calls, 2nd verify of unchanged code: {second_calls}   (goal 0; cached_dispatch)")
    print(f"same with plain dispatch(model):           {plain_calls}   (goal 0)")


if __name__ == "__main__":
    main()
