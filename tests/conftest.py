"""Shared test helpers: run the installed console scripts for real, in an isolated home."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from prove_common.files import lock

BIN_DIR = Path(sys.executable).parent
SCRIPT_ENV_DROP_PREFIXES = ("POISSON_PROVE_", "PROVEAI_", "GITHUB_")


def pytest_configure(config: pytest.Config) -> None:
    """Children get Ctrl-C as a user's would, even when pytest itself was started in the
    background by a shell that ignores SIGINT there (an ignored signal is inherited across exec,
    which would make every Ctrl-C test fail for a reason outside the product)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def script_path(name: str) -> str:
    """The installed console script `name` next to this interpreter."""
    path = BIN_DIR / name
    if not path.exists():
        pytest.fail(f"console script {name} is not installed in {BIN_DIR}: pip install -e .")
    return str(path)


def isolated_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a user would have, with HOME and caches inside the test's folder."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(SCRIPT_ENV_DROP_PREFIXES) and k not in {"CI", "NO_COLOR"}
    }
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        PYTHONDONTWRITEBYTECODE="1",
        COLUMNS="120",
    )
    if extra:
        env.update(extra)
    return env


def once_per_session(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Any]) -> Any:
    """`make(root)` run once for the whole session, however many pytest-xdist workers ask: the
    first to take the lock makes it in a folder every worker sees (the parent of each worker's
    own temporary folder) and keeps its JSON-able result beside it; the others wait for the lock
    and read that back. Every caller gets the value as read back from JSON, the maker too (so
    which worker made it changes nothing). For a costly setup (real tools, whole tables of
    cases) that a test stolen by another worker would otherwise make once more."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    made = shared / f"{name}.json"
    with lock(shared / f"{name}.lock", timeout=1800):
        if not made.exists():
            root = shared / name
            root.mkdir(exist_ok=True)
            made.write_text(json.dumps(make(root)), "utf-8")
        return json.loads(made.read_text("utf-8"))


class CLI:
    """Runs a console script in a subprocess and returns the CompletedProcess (text mode)."""

    def __init__(self, name: str, cwd: Path, home: Path) -> None:
        self.name = name
        self.cwd = cwd
        self.home = home

    def __call__(
        self,
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [script_path(self.name), *args],
            cwd=cwd or self.cwd,
            env=isolated_env(self.home, env),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def prove(workdir: Path, home: Path) -> CLI:
    """`poisson-prove`, run for real in a fresh working folder."""
    return CLI("poisson-prove", workdir, home)


@pytest.fixture
def proveai_cli(workdir: Path, home: Path) -> CLI:
    """`proveai`, run for real in a fresh working folder."""
    return CLI("proveai", workdir, home)


def assert_clean_error(result: subprocess.CompletedProcess[str], code: int, *fragments: str) -> None:
    """A refusal as users must see it: the exit code, `error:` lines, no traceback."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(error_lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def run_on_terminal(
    name: str,
    args: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 120,
    *,
    answer: bytes | None = None,
    prompt: bytes = b"[y/N]",
    all_on_terminal: bool = False,
) -> tuple[int, str, str]:
    """Run console script `name` with its stdout on a pseudo-terminal, as a user at a terminal.

    Returns (exit code, what it drew there with CRLF folded to LF, stderr). With `answer`,
    stdin is the terminal too and `answer` is typed there once `prompt` is drawn; with
    `all_on_terminal`, stdin and stderr are the terminal as well (what the script writes to
    stderr is then drawn, and the stderr returned is ""). The terminal and stderr are read
    while the script runs, so a long report never blocks on a full buffer; the whole run is
    bounded by `timeout` seconds (past it the script is killed and the test fails).
    """
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [script_path(name), *args],
        cwd=cwd,
        env=dict(env),
        stdin=follower if all_on_terminal or answer is not None else subprocess.DEVNULL,
        stdout=follower,
        stderr=follower if all_on_terminal else subprocess.PIPE,
        close_fds=True,
    )
    os.close(follower)
    deadline = time.monotonic() + timeout
    drawn, errors = bytearray(), bytearray()
    reading = {leader: drawn}
    if process.stderr is not None:
        reading[process.stderr.fileno()] = errors
    try:
        while reading:
            left = deadline - time.monotonic()
            ready = select.select(list(reading), [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                process.kill()
                process.wait(timeout=30)
                pytest.fail(f"{name} {' '.join(args)} was still running after {timeout} s")
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: every holder of the terminal closed its end
                    chunk = b""
                if not chunk:
                    del reading[fd]
                    continue
                reading[fd] += chunk
                if answer is not None and fd == leader and prompt in drawn:
                    os.write(leader, answer)
                    answer = None
        code = process.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        os.close(leader)
        if process.stderr is not None:
            process.stderr.close()
    text = bytes(drawn).decode("utf-8", "replace").replace("\r\n", "\n")
    return code, text, bytes(errors).decode("utf-8", "replace")
