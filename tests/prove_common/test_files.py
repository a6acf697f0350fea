"""prove_common.files: one atomic write whose temporary names never collide between writers,
the cleanup of what a killed writer left (never a live writer's file), and one lock that a
killed holder frees and a timeout turns into a clear error. Writers and holders are real
processes, killed with SIGKILL where the test is about a killed one."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from prove_common.errors import UserError
from prove_common.files import (
    STALE_AFTER_S,
    FileTooLarge,
    LockTimeout,
    NotRegularFile,
    atomic_path,
    clear_stale_temps,
    lock,
    open_regular,
    read_regular_bytes,
    read_regular_text,
    temp_path,
    write_bytes_atomic,
    write_text_atomic,
)
from tests.conftest import isolated_env

# writes `document <n>` to one file again and again, as fast as it can
WRITER = """
import sys
from prove_common.files import write_text_atomic
target, tag = sys.argv[1], sys.argv[2]
for n in range(300):
    write_text_atomic(target, f"{tag} {n}\\n" * 200, durable=False)
print("done", flush=True)
"""

# opens the temporary file of sys.argv[1] through atomic_path, says so, then waits (to be killed)
HALF_WRITER = """
import sys
from prove_common.files import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    tmp.write_text("half a docu")
    print(tmp, flush=True)
    sys.stdin.readline()
"""

# takes the lock, says so, holds it until told to go on (or killed)
HOLDER = """
import sys
from prove_common.files import lock
with lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def child(script: str, *args: str, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], env=isolated_env(home), text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder of its own (tmp_path also holds the children's home)."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def make_old(path: Path) -> None:
    past = path.stat().st_mtime - STALE_AFTER_S - 5
    os.utime(path, (past, past))


def test_text_is_written_byte_for_byte_and_only_the_file_remains(tmp_path: Path) -> None:
    target = tmp_path / "snapshot.json"
    write_text_atomic(target, "first\n")
    write_text_atomic(target, "zweite Zeile: ü\r\nand a bare \n", durable=False)
    assert target.read_bytes() == "zweite Zeile: ü\r\nand a bare \n".encode()  # no newline translation
    write_bytes_atomic(target, b"\x00\xffbytes")
    assert target.read_bytes() == b"\x00\xffbytes"
    assert [p.name for p in tmp_path.iterdir()] == ["snapshot.json"]


def test_the_mode_is_the_new_files_permission_bits(tmp_path: Path) -> None:
    private = tmp_path / "entry.json"
    write_bytes_atomic(private, b"{}", mode=0o600)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600


def test_temporary_names_follow_one_scheme_and_differ_per_writer(tmp_path: Path) -> None:
    first, second = temp_path(tmp_path / "report.html"), temp_path(tmp_path / "report.html")
    assert first != second and first.parent == tmp_path
    assert first.name.startswith(f".report.html.{os.getpid()}-") and first.name.endswith(".tmp")


def test_two_processes_writing_one_file_never_collide(work: Path, home: Path) -> None:
    target = work / "report.html"
    writers = [child(WRITER, str(target), tag, home=home) for tag in ("a", "b")]
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err  # a shared temporary name fails one writer's rename
        assert out == "done\n"
    lines = target.read_text().splitlines()
    assert len(lines) == 200 and len(set(lines)) == 1 and lines[0] in ("a 299", "b 299")
    assert [p.name for p in work.iterdir()] == ["report.html"]


def test_threads_of_one_process_writing_one_file_never_collide(tmp_path: Path) -> None:
    target = tmp_path / "cache.json"
    failures: list[BaseException] = []

    def write(tag: str) -> None:
        try:
            for n in range(200):
                write_text_atomic(target, f"{tag}{n}", durable=False)
        except BaseException as exc:  # collected, so the test names it
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(tag,)) for tag in "xyz"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert target.read_text() in ("x199", "y199", "z199")


def test_atomic_path_renames_a_whole_file_into_place(tmp_path: Path) -> None:
    final = tmp_path / "batch-000001.parquet"
    with atomic_path(final) as tmp:
        assert not final.exists() and tmp.parent == tmp_path
        tmp.write_bytes(b"PAR1...PAR1")
    assert final.read_bytes() == b"PAR1...PAR1"
    assert [p.name for p in tmp_path.iterdir()] == [final.name]


@pytest.mark.parametrize("error", [ValueError("the writer failed"), KeyboardInterrupt()])
def test_atomic_path_removes_its_temporary_on_an_error_and_keeps_the_old_file(
    tmp_path: Path, error: BaseException
) -> None:
    final = tmp_path / "manifest.json"
    final.write_text("old")
    with pytest.raises(type(error)), atomic_path(final) as tmp:
        tmp.write_text("half")
        raise error
    assert final.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_a_killed_writers_temporary_is_cleared_a_live_writers_never(work: Path, home: Path) -> None:
    final = work / "manifest.json"
    killed = child(HALF_WRITER, str(final), home=home)
    live = child(HALF_WRITER, str(final), home=home)
    assert killed.stdout is not None and live.stdout is not None and live.stdin is not None
    killed_tmp, live_tmp = Path(killed.stdout.readline().strip()), Path(live.stdout.readline().strip())
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=20)
    assert killed.returncode == -signal.SIGKILL and killed_tmp.exists()  # what a kill leaves

    (work / ".editor.json").write_text("{}")  # not of the scheme: never touched
    (work / "notes.tmp").write_text("mine")
    assert clear_stale_temps(work) == []  # too young: its writer may be on another machine
    make_old(killed_tmp)
    make_old(live_tmp)
    assert clear_stale_temps(work, "other.json") == []  # only the named file's temporaries
    assert clear_stale_temps(work) == [killed_tmp]
    assert live_tmp.exists() and not killed_tmp.exists()  # the live writer's file is its own

    _, err = live.communicate("go on\n", timeout=20)
    assert live.returncode == 0, err
    assert final.read_text() == "half a docu" and not live_tmp.exists()
    assert sorted(p.name for p in work.iterdir()) == [".editor.json", "manifest.json", "notes.tmp"]


def test_every_writer_clears_temporaries_of_live_writers_too(work: Path, home: Path) -> None:
    # for a caller holding the folder's one writer lock: nobody else can be writing there
    live = child(HALF_WRITER, str(work / "batch.parquet"), home=home)
    assert live.stdout is not None
    live_tmp = Path(live.stdout.readline().strip())
    assert clear_stale_temps(work, every_writer=True) == [live_tmp]
    live.communicate("go on\n", timeout=20)
    assert live.returncode != 0  # its rename found no file: why only a lock holder may do this
    assert clear_stale_temps(work / "missing") == []


def test_a_held_lock_times_out_with_a_clear_error_and_is_free_once_released(work: Path, home: Path) -> None:
    path = work / ".store.lock"
    holder = child(HOLDER, str(path), home=home)
    assert holder.stdout is not None
    assert holder.stdout.readline() == "held\n"
    with pytest.raises(LockTimeout) as caught:
        lock(path, timeout=0.2)
    assert isinstance(caught.value, UserError)  # both command lines show it as one error: line
    assert caught.value.message == f"{path} is locked by another process (waited 0.2 s)"
    assert caught.value.suggestions and caught.value.path == path
    with pytest.raises(LockTimeout):
        lock(path, timeout=0)
    out, err = holder.communicate("go on\n", timeout=20)
    assert holder.returncode == 0 and out == "released\n", err
    held = lock(path, timeout=20)
    held.release()
    held.release()  # twice is harmless
    with lock(path, timeout=0):
        pass
    assert path.exists()  # the lock file stays; only the OS lock is let go


def test_a_killed_holder_frees_the_lock(work: Path, home: Path) -> None:
    path = work / ".lock"
    holder = child(HOLDER, str(path), home=home)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(LockTimeout):
        lock(path, timeout=0)
    holder.send_signal(signal.SIGKILL)
    holder.communicate(timeout=20)
    with lock(path, timeout=20) as held:
        assert held.path == path


def test_a_lock_file_that_cannot_be_one_is_not_a_timeout(tmp_path: Path) -> None:
    (tmp_path / ".store.lock").mkdir()  # an OS error, not contention: it propagates as itself
    with pytest.raises(OSError):
        lock(tmp_path / ".store.lock", timeout=0)


def test_a_regular_file_is_read_byte_for_byte_and_a_symlink_to_one_too(tmp_path: Path) -> None:
    path = tmp_path / "spec.toml"
    path.write_bytes(b"a = 1\r\nb = '\xc3\xa9'\n")
    (tmp_path / "link.toml").symlink_to(path)
    assert read_regular_bytes(path) == b"a = 1\r\nb = '\xc3\xa9'\n"
    assert read_regular_text(tmp_path / "link.toml") == "a = 1\r\nb = 'é'\n"  # no newline translation
    with open_regular(path) as handle:
        assert handle.read() == path.read_bytes()


def test_devices_fifos_sockets_and_folders_are_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    import socket  # only this test binds a unix socket

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: opening it for a blocking read would hang this test
    sock_path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    (tmp_path / "zero-link").symlink_to("/dev/zero")
    cases = {
        "/dev/zero": "a character device",
        str(tmp_path / "zero-link"): "a character device",
        str(fifo): "a FIFO (named pipe)",
        str(tmp_path): "a folder",
    }
    try:
        for path, kind in cases.items():
            with pytest.raises(NotRegularFile) as caught:
                read_regular_text(path)
            assert caught.value.kind == kind
            assert str(caught.value) == f"{path} is {kind}, not a regular file"
            assert isinstance(caught.value, OSError)  # callers turning OSError into their error get it
        with pytest.raises(OSError):  # a socket cannot even be opened; never read
            read_regular_bytes(sock_path)
    finally:
        server.close()


def test_a_file_past_the_limit_is_refused_and_the_limit_itself_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 1000)
    assert read_regular_bytes(path, limit=1000) == b"x" * 1000
    with pytest.raises(FileTooLarge) as caught:
        read_regular_bytes(path, limit=999)
    assert str(caught.value) == f"{path} is larger than 999 bytes, the most an input file is read"
    with pytest.raises(FileNotFoundError):
        read_regular_bytes(tmp_path / "missing")
    with pytest.raises(UnicodeDecodeError):
        path.write_bytes(b"\xff\xfe")
        read_regular_text(path)
