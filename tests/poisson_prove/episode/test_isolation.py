"""The target's side effects kept where they belong, through the installed `sweep`: with --json,
stdout holds one JSON document whatever the target writes to fd 1, every write lands on stderr
exactly once, exit codes are those of the sweep without --json; --dry-run imports the target in
a child with the network blocked."""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import small_spec, write

NOISY = r"""
import atexit, ctypes, os, subprocess, sys, threading
from poisson_prove import Episode

print("MARK-IMPORT-PRINT")
libc = ctypes.CDLL(None)
atexit.register(lambda: print("MARK-ATEXIT"))
_first = [True]
_lock = threading.Lock()  # the first episode writes, once, even with episodes in threads

def rollout(cfg, seed):
    with _lock:
        first, _first[0] = _first[0], False
    if first:
        print("MARK-ROLLOUT-PRINT")
        sys.stdout.buffer.write(b"MARK-BUFFER\n")
        os.write(1, b"MARK-OSWRITE\n")
        libc.printf(b"MARK-LIBC\n")
        libc.fflush(None)
        subprocess.run([sys.executable, "-c", "print('MARK-SUBPROCESS')"], check=True)
        sys.stdout.write("MARK-NO-NEWLINE")
    return Episode("ok", 1, 5, {"case_id": cfg["x"]})
"""
MARKERS = [
    "MARK-IMPORT-PRINT",
    "MARK-ROLLOUT-PRINT",
    "MARK-BUFFER",
    "MARK-OSWRITE",
    "MARK-LIBC",
    "MARK-SUBPROCESS",
    "MARK-ATEXIT",
    "MARK-NO-NEWLINE",
]


@pytest.mark.parametrize(
    "extra",
    [[], ["--episode-timeout", "30"], ["--concurrency", "4"]],
    ids=["in-process", "episode-timeout", "threads"],
)
def test_every_write_goes_to_stderr_once(prove, workdir, extra) -> None:
    write(workdir, "agent.py", NOISY)
    small_spec(workdir, replicates=20, values=["a"])
    args = ["sweep", "--yes", "--json", "--max-mde", "0.5", *extra]
    result = prove(*args)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)  # the whole of stdout is one document
    assert document["schema"] == "poisson-prove.sweep/1"
    assert document["verdict"] == "done"
    assert document["counts"] == {"done": 20, "planned": 20, "errored": 0, "ran": 20}
    assert document["run"]["status"] == "complete" and len(document["run"]["salt"]) == 32
    for marker in MARKERS:
        assert result.stderr.count(marker) == 1, (marker, result.stderr)
    assert "MARK" not in result.stdout


def test_exit_codes_are_unchanged_and_sys_exit_at_import_exits_3(prove, workdir) -> None:
    write(workdir, "agent.py", "print('MARK-EXIT')\nimport sys\nsys.exit(4)\n")
    small_spec(workdir, replicates=20, values=["a"])
    plain = prove("sweep", "--yes", "--max-mde", "0.5")
    assert_clean_error(plain, 1, "called sys.exit(4) while importing")
    result = prove("sweep", "--yes", "--json", "--max-mde", "0.5")
    assert_clean_error(result, 3, "called sys.exit(4) while importing", "errors.log")
    document = json.loads(result.stdout)
    assert document["verdict"] == "failed" and "errors.log" in document["error"]["message"]
    assert result.stderr.count("MARK-EXIT") == 1

    write(workdir, "agent.py", "def rollout(cfg, seed):\n    raise SystemExit(5)\n")
    result = prove("sweep", "--yes", "--json", "--max-mde", "0.5")
    assert_clean_error(result, 3, "errors.log")
    assert json.loads(result.stdout)["verdict"] == "failed"


NETWORK_AT_IMPORT = """
import os, socket, sys
print("MARK-DRY-IMPORT")
os.write(2, b"MARK-DRY-STDERR\\n")
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    verdict = "connected"
except OSError as exc:
    verdict = f"blocked: {{exc}}"
with open({report!r}, "w") as handle:
    handle.write(verdict)

def rollout(cfg, seed):
    raise AssertionError("--dry-run must not call the rollout")
"""


def test_dry_run_imports_in_a_child_with_the_network_blocked(prove, workdir, tmp_path) -> None:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    report = tmp_path / "import-report.txt"
    write(workdir, "agent.py", NETWORK_AT_IMPORT.format(port=port, report=str(report)))
    small_spec(workdir, replicates=20)
    result = prove("sweep", "--dry-run", "--max-mde", "0.5")
    assert result.returncode == 0, result.stderr
    assert "MARK" not in result.stdout + result.stderr  # nothing of what the import wrote
    assert report.read_text().startswith("blocked: the network is blocked")
    with pytest.raises(TimeoutError):
        server.accept()  # nobody connected
    server.close()
    assert not (workdir / "prove-runs").exists()


HANGING_IMPORT = """
import subprocess, time
helper = subprocess.Popen(["sleep", "60"])  # something the import started
with open({pid_file!r}, "w") as handle:
    handle.write(str(helper.pid))
time.sleep(60)  # an import that waits on something that never comes

def rollout(cfg, seed):
    pass
"""


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped is not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.timeout(40)  # an import check that ignored its limit would sleep 60 s: a failure
def test_an_import_past_its_limit_is_refused_and_what_it_started_is_killed(tmp_path, monkeypatch) -> None:
    import time

    from poisson_prove.episode import isolation
    from poisson_prove.errors import ProveError

    pid_file = tmp_path / "helper.pid"
    write(tmp_path, "slowagent.py", HANGING_IMPORT.format(pid_file=str(pid_file)))
    monkeypatch.setattr(isolation, "CHECK_TIMEOUT_S", 3.0)
    with pytest.raises(ProveError, match='target "slowagent:rollout" took more than 3 s to import'):
        isolation.check_target_isolated("slowagent:rollout", tmp_path)
    helper = int(pid_file.read_text())  # written before the import began to wait
    # SIGKILL went to the child's whole group; a helper left running keeps this loop going
    # until the test's timeout fails it.
    while _running(helper):
        time.sleep(0.05)
