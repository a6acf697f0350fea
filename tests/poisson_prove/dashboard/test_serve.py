"""`dashboard --serve`: a real child process on 127.0.0.1, new runs show, Ctrl-C ends it."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import httpx

from tests.conftest import isolated_env, script_path


def test_serve_shows_runs_as_they_land_and_ends_cleanly_on_ctrl_c(prove, workdir: Path, home: Path) -> None:
    assert prove("init", "--example").returncode == 0
    assert prove("sweep", "--yes", "--name", "first run").returncode == 0
    child = subprocess.Popen(
        [script_path("poisson-prove"), "dashboard", "--serve", "--refresh", "2"],
        cwd=workdir, env=isolated_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        second = child.stdout.readline()
        assert first == f"wrote {Path('prove-runs') / 'dashboard.html'}\n"
        found = re.fullmatch(r"serving (http://127\.0\.0\.1:(\d+)/) \(Ctrl-C to stop\)\n", second)
        assert found, second
        url, port = found.group(1), int(found.group(2))
        assert port > 0
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "first run" in page.text and "second run" not in page.text
        assert '<meta http-equiv="refresh" content="2">' in page.text
        assert httpx.get(url + "nothing-here", timeout=30).status_code == 404

        assert prove("sweep", "--yes", "--name", "second run").returncode == 0
        again = httpx.get(url, timeout=30)
        assert "second run" in again.text and "latest pair: first run → second run" in again.text
    finally:
        child.send_signal(signal.SIGINT)
        try:
            out, err = child.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # never leave a server behind, whatever failed
            child.kill()
            out, err = child.communicate()
    assert child.returncode == 0, err
    assert err == "stopped serving\n"
    assert out == ""
    # the port is free again: the server closed its socket
    with httpx.Client() as client:
        try:
            client.get(url, timeout=2)
            raise AssertionError("the server still answers after Ctrl-C")
        except httpx.ConnectError:
            pass
