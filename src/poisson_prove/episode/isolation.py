"""Keeping the target's side effects where they belong.

- `check_target_isolated` imports the target in a child process of its own with the network
  blocked, checks it takes (cfg, seed) without calling it, and shows nothing of what the
  import printed: the --dry-run check.
- `StdoutGuard` moves everything the target writes to file descriptor 1 over to stderr (the
  --json stream rule): fd 1 is duplicated for Prove's own document, then stderr is dup2'ed
  onto fd 1 and left there until the interpreter exits, so prints, sys.stdout.buffer,
  os.write(1, ...), the C library, child processes and atexit hooks all land on stderr, once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from poisson_prove.errors import ProveError

CHECK_TIMEOUT_S = 120.0

# Runs in the child: block the network, import, check the signature, answer on fd `answer`.
_CHILD = r"""
import json, os, socket, sys
answer_fd = int(sys.argv[3])

def _blocked(*args, **kwargs):
    raise OSError("the network is blocked while --dry-run checks the import")

socket.socket.connect = _blocked
socket.socket.connect_ex = _blocked
socket.socket.sendto = _blocked
socket.create_connection = _blocked
socket.getaddrinfo = _blocked
socket.gethostbyname = _blocked
socket.gethostbyname_ex = _blocked

def _answer(document):
    data = json.dumps(document).encode()
    while data:
        data = data[os.write(answer_fd, data):]
    os.close(answer_fd)
    os._exit(0)

try:
    from poisson_prove.episode.run import import_target
    import_target(sys.argv[1], sys.argv[2])
except BaseException as exc:
    message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    _answer({"ok": False, "message": message, "suggestions": list(getattr(exc, "suggestions", ()))})
_answer({"ok": True})
"""


def check_target_isolated(target: str, spec_dir: Path) -> None:
    """Import `target` in a child process with the network blocked; raise ProveError if it fails.

    The child's stdout and stderr are discarded (the check is not a run); its verdict comes
    back on a pipe of its own.
    """
    read_fd, write_fd = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, target, str(spec_dir), str(write_fd)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write_fd,),
            cwd=str(spec_dir),
        )
    finally:
        os.close(write_fd)
    chunks = []
    try:
        with os.fdopen(read_fd, "rb") as answer:
            chunks.append(answer.read())
        process.wait(timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise ProveError(f'target "{target}" took more than {CHECK_TIMEOUT_S:.0f} s to import') from None
    except KeyboardInterrupt:
        process.kill()
        process.wait()
        raise
    raw = b"".join(chunks)
    try:
        verdict = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        verdict = None
    if verdict is None:
        raise ProveError(
            f'target "{target}" ended its process while importing (exit code {process.returncode})',
            suggestions=["a module should not call os._exit or crash when it is imported"],
        )
    if not verdict.get("ok"):
        raise ProveError(
            verdict.get("message", "the target does not import"), suggestions=verdict.get("suggestions", [])
        )


class StdoutGuard:
    """Route fd 1 to stderr for the rest of the process; keep a private fd for the document."""

    def __init__(self) -> None:
        self._fd: int | None = None

    def activate(self) -> None:
        if self._fd is not None:
            return
        sys.stdout.flush()
        self._fd = os.dup(1)
        os.set_inheritable(self._fd, False)
        os.dup2(2, 1)

    @property
    def active(self) -> bool:
        return self._fd is not None

    def write(self, text: str) -> None:
        """Write Prove's own output to the real stdout (fd 1 before activation)."""
        sys.stdout.flush()
        data = text.encode("utf-8")
        fd = self._fd if self._fd is not None else 1
        while data:
            data = data[os.write(fd, data) :]
