"""The invocation recorded at Trace.__enter__: exact enough for the snapshot re-run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from proveai.capture.invocation import InterpreterArgs, split_interpreter_argv
from tests.conftest import isolated_env

PIPELINE = """
import json, sys
from proveai import FileExporter, monitor, trace

@monitor("echo")
def echo(x):
    return x

with trace("inv", exporters=[FileExporter()]) as t:
    echo("hi")
print(json.dumps(t.invocation))
"""


def invocation_of(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_script_mode_from_a_subfolder_of_the_project(py, workdir):
    (workdir / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    py.write("pipelines/run.py", PIPELINE)
    sub = workdir / "pipelines"
    result = py("run.py", "--flag", "v a l", cwd=sub, env={"OPENAI_API_KEY": "sk-secret", "PROVEAI_X": "1"})
    inv = invocation_of(result)
    assert inv["python"] == sys.executable
    assert inv["argv"] == ["run.py", "--flag", "v a l"]
    assert inv["script"] == "run.py" and inv["module"] is None
    assert inv["cwd"] == "pipelines" and inv["project_root"] == str(workdir.resolve())
    assert "OPENAI_API_KEY" in inv["env_names"] and "PROVEAI_X" in inv["env_names"]
    assert inv["env_names"] == sorted(inv["env_names"])
    assert inv["rerunnable"] is True and inv["why_not"] is None
    everything = (workdir / "proveai").rglob("*")
    assert not any("sk-secret" in p.read_text(errors="replace") for p in everything if p.is_file())
    manifest = json.loads((sub / "proveai" / "traces" / "manifest.json").read_text())
    assert next(iter(manifest.values()))["invocation"] == inv


def test_module_mode_and_interpreter_options(py, workdir):
    py.write("mypkg/__init__.py", "")
    py.write("mypkg/main.py", PIPELINE)
    inv = invocation_of(py("-X", "utf8", "-m", "mypkg.main", "a"))
    assert inv["argv"] == ["-X", "utf8", "-m", "mypkg.main", "a"]
    assert inv["module"] == "mypkg.main" and inv["script"] is None and inv["rerunnable"] is True
    assert inv["cwd"] == "." and inv["project_root"] == str(workdir.resolve())  # no marker: cwd


def test_command_and_stdin_are_not_rerunnable(py):
    inv = invocation_of(py("-c", PIPELINE))
    assert inv["rerunnable"] is False and "python -c" in inv["why_not"]
    inv = invocation_of(py("-", input=PIPELINE))
    assert inv["rerunnable"] is False and "stdin" in inv["why_not"]


def test_argv_bytes_survive_exactly(py, workdir, home):
    py.write("run.py", PIPELINE)
    raw = b"caf\xe9-\xff"  # not UTF-8
    result = subprocess.run(
        [os.fsencode(sys.executable), b"run.py", raw], cwd=workdir, env=isolated_env(home),
        capture_output=True,
    )
    assert result.returncode == 0, result.stderr
    inv = json.loads(result.stdout.decode().strip())
    assert os.fsencode(inv["argv"][1]) == raw
    # and through the stored trace file too
    from proveai import load_trace

    (path,) = [p for p in (workdir / "proveai" / "traces").glob("*.json") if len(p.stem) == 32]
    assert os.fsencode(load_trace(path).invocation["argv"][1]) == raw


def test_the_argument_list_is_read_as_the_interpreter_reads_it() -> None:
    """What `snapshot verify` checks before a re-run: the target and the options before it."""
    python = "/venv/bin/python"
    assert split_interpreter_argv([python, "-X", "utf8", "-Bu", "run.py", "-c", "x"]) == InterpreterArgs(
        "script", "run.py", None, (("-X", "utf8"), ("-B", None), ("-u", None))
    )
    assert split_interpreter_argv([python, "-Werror", "-mpkg.run", "a"]) == InterpreterArgs(
        "module", "pkg.run", None, (("-W", "error"),)
    )
    assert split_interpreter_argv([python, "--", "-c"]) == InterpreterArgs("script", "-c", None)
    assert split_interpreter_argv([python, "-Ic", "print(1)"]).mode == "command"
    assert split_interpreter_argv([python, "-"]).mode == "stdin"
    assert split_interpreter_argv([python, "-i"]).mode == "interactive"
