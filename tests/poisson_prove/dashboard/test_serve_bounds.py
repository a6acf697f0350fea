"""`dashboard --serve` under load and from a browser elsewhere, as a real child process on
127.0.0.1: idle and half-sent connections cost no thread and are closed by the server itself,
every GET among them is answered, a client giving up mid-answer leaves no traceback, and a
foreign Host (DNS rebinding) is refused. Bounded: 300 idle sockets, 200 GETs."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import isolated_env, script_path

IDLE = 300  # 250 half-sent requests and 50 connections that send nothing
GETS = 200
THREADS_ABOVE_START = 3  # the rendering thread, and room for what the interpreter starts itself


@dataclass
class Serving:
    process: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/task"))

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        try:
            _, err = self.process.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # never leave a server behind, whatever failed
            self.process.kill()
            _, err = self.process.communicate()
        return self.process.returncode, err


@pytest.fixture
def serving(prove, workdir: Path, home: Path) -> Iterator[Serving]:
    assert prove("init", "--example").returncode == 0
    assert prove("sweep", "--yes", "--name", "first run").returncode == 0
    process = subprocess.Popen(
        [script_path("poisson-prove"), "dashboard", "--serve"],
        cwd=workdir, env=isolated_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    process.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
    assert found, "the server printed no address"
    served = Serving(process, int(found.group(1)))
    try:
        yield served
    finally:
        if process.poll() is None:
            served.stop()


def _get(url: str) -> int:
    return httpx.get(url, timeout=120).status_code


def test_idle_connections_cost_no_thread_and_every_get_is_answered(serving: Serving) -> None:
    assert _get(serving.url) == 200  # the page rendered once, its thread started
    at_start = serving.threads()
    idle: list[socket.socket] = []
    try:
        for number in range(IDLE):
            conn = socket.create_connection(("127.0.0.1", serving.port), timeout=120)
            if number % 6:
                conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
            idle.append(conn)
        with ThreadPoolExecutor(max_workers=50) as pool:
            statuses = list(pool.map(_get, [serving.url] * GETS))
        busiest = serving.threads()
        assert statuses == [200] * GETS
        assert busiest <= at_start + THREADS_ABOVE_START, (at_start, busiest)
        # the server closes what never became a request by itself (an answer, then the end)
        for conn in idle:
            reply = b""
            while chunk := conn.recv(65536):
                reply += chunk
            assert reply == b"" or reply.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), reply[:80]
    finally:
        for conn in idle:
            conn.close()
    assert serving.threads() <= at_start + THREADS_ABOVE_START
    code, err = serving.stop()
    assert (code, err) == (0, "stopped serving\n")


def test_clients_giving_up_mid_answer_leave_no_traceback(serving: Serving) -> None:
    for _ in range(20):
        conn = socket.create_connection(("127.0.0.1", serving.port), timeout=60)
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        conn.close()  # a reset, before the page is read
    assert _get(serving.url) == 200
    code, err = serving.stop()
    assert (code, err) == (0, "stopped serving\n")


def test_a_foreign_host_is_refused(serving: Serving) -> None:
    for host in ("evil.example", f"evil.example:{serving.port}", f"127.0.0.1.evil.example:{serving.port}"):
        refused = httpx.get(serving.url, headers={"Host": host}, timeout=60)
        assert refused.status_code == 403, host
        assert "first run" not in refused.text and "is not this machine" in refused.text
    for host in (f"localhost:{serving.port}", f"127.0.0.1:{serving.port}", "localhost"):
        assert httpx.get(serving.url, headers={"Host": host}, timeout=60).status_code == 200
    with socket.create_connection(("127.0.0.1", serving.port), timeout=60) as conn:
        conn.sendall(b"GET /" + b"x" * 70_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert conn.recv(65536).startswith(b"HTTP/1.1 414 URI Too Long\r\n")
    assert httpx.post(serving.url, content=b"x", timeout=60).status_code == 501
