"""Write a pipeline script and run it with the project's Python (capture, store and docs tests)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import isolated_env

# A stand-in model and CRM so the docs' snippets run as written, offline.
STAND_INS = '''
import json as _json

class _StandInLLM:
    def invoke(self, prompt=None):
        text = str(prompt)
        if text.startswith("Classify"):
            return _json.dumps({"category": "damaged item"})
        if text.startswith("Critique") or text.startswith("QA"):
            return "Looks correct; no obvious errors."
        return "We are sorry your order arrived broken; a replacement ships today [1]."

class _StandInCRM:
    def fetch(self, category):
        return {"category": category, "previous_tickets": 2}

llm = _StandInLLM()
crm = _StandInCRM()
'''


class PyRunner:
    """Runs Python code as a real script in a working folder with an isolated home."""

    def __init__(self, cwd: Path, home: Path) -> None:
        self.cwd = cwd
        self.home = home

    def write(self, name: str, code: str) -> Path:
        path = self.cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code), encoding="utf-8")
        return path

    def __call__(
        self, *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
        input: str | None = None, timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args], cwd=cwd or self.cwd, env=isolated_env(self.home, env),
            capture_output=True, text=True, input=input, timeout=timeout,
        )

    def ok(self, *args: str, **kw) -> subprocess.CompletedProcess[str]:
        result = self(*args, **kw)
        assert result.returncode == 0, (result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        return result


@pytest.fixture
def py(workdir: Path, home: Path) -> PyRunner:
    return PyRunner(workdir, home)


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def trace_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.glob("*.json") if p.name != "manifest.json" and not p.name.endswith(".detection.json")
    )
