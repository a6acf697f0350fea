"""Detection engines started for real as `proveai engine serve` processes, stopped by signal."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from proveai import ProveAI
from tests.conftest import isolated_env, script_path


@dataclass
class Engine:
    process: subprocess.Popen[str]
    url: str
    store: Path
    banner: str

    def stop(self, sig: int = signal.SIGINT, timeout: float = 20) -> tuple[int, str, str]:
        """Signal the engine, wait for it, return (exit code, stdout after the banner, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out, err


def start_engine(cwd: Path, home: Path, *args: str, env: Mapping[str, str] | None = None) -> Engine:
    process = subprocess.Popen(
        [script_path("proveai"), "engine", "serve", "--port", "0", *args],
        cwd=cwd, env=isolated_env(home, env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    if "listening on" not in first:
        process.kill()
        out, err = process.communicate(timeout=10)
        pytest.fail(f"engine did not start: {first!r} {out!r} {err!r}")
    banner = first + process.stdout.readline() + process.stdout.readline()
    url = first.split("listening on ", 1)[1].strip()
    store_line = banner.split("store: ", 1)[1].splitlines()[0].strip()
    store = Path(store_line) if os.path.isabs(store_line) else cwd / store_line
    return Engine(process, url, store, banner)


@pytest.fixture(name="engines")
def engines_fixture(workdir: Path, home: Path) -> Iterator[list[Engine]]:
    """Start engines with `engines.append(start_engine(...))`; each is stopped by its pid after."""
    started: list[Engine] = []
    yield started
    for engine in started:
        if engine.process.poll() is None:
            os.killpg(engine.process.pid, signal.SIGKILL)
            engine.process.wait(timeout=10)


@pytest.fixture(name="engine")
def engine_fixture(engines: list[Engine], workdir: Path, home: Path) -> Engine:
    started = start_engine(workdir, home)
    engines.append(started)
    return started


def client(url: str, **kw) -> ProveAI:
    """A client of the engine at url, as a pipeline run by a customer would make it."""
    return ProveAI(endpoint=url, run_id="run-7", customer_id="acme", mas_name="research-pipeline", **kw)
