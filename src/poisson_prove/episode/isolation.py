"""Keeping the target's side effects where they belong.

- `check_target_isolated` imports the target in a child process of its own session with the
  network blocked, checks it takes (cfg, seed) without calling it, and shows nothing of what
  the import printed: the --dry-run check. An import past its time limit is refused, with the
  child's whole process group killed.
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
import tempfile
from pathlib import Path

from poisson_prove.errors import ProveError
from prove_common.children import run_child

CHECK_TIMEOUT_S = 120.0

# Runs in the child: block the network, import, check the signature, write the answer to the
# file named by argv[3] (not a pipe: nothing the import starts can hold the answer open).
_CHILD = r"""
import json, os, socket, sys
answer_path = sys.argv[3]

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
    with open(answer_path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(document))
    os._exit(0)

try:
    from poisson_prove.episode.target import import_target
    import_target(sys.argv[1], sys.argv[2])
except BaseException as exc:
    message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    _answer({"ok": False, "message": message, "suggestions": list(getattr(exc, "suggestions", ()))})
_answer({"ok": True})
"""


def check_target_isolated(target: str, spec_dir: Path) -> None:
    """Import `target` in a child process with the network blocked; raise ProveError if it fails.

    The child leads its own session (prove_common.children.run_child): an import still running
    after CHECK_TIMEOUT_S has the child's whole process group killed, anything the import
    started included, and is refused. The child's stdout and stderr are discarded (the check
    is not a run); its verdict comes back in a file of its own.
    """
    with tempfile.TemporaryDirectory(prefix="prove-import-check-") as folder:
        answer = Path(folder) / "answer.json"
        finished = run_child(
            [sys.executable, "-c", _CHILD, target, str(spec_dir), str(answer)],
            cwd=spec_dir,
            timeout=CHECK_TIMEOUT_S,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if finished.timed_out:
            raise ProveError(f'target "{target}" took more than {CHECK_TIMEOUT_S:.0f} s to import')
        try:
            verdict = json.loads(answer.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            verdict = None
    if not isinstance(verdict, dict):
        raise ProveError(
            f'target "{target}" ended its process while importing (exit code {finished.returncode})',
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
