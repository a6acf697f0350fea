"""Files read and written one way for both packages: input read bounded, atomic writes under one
temporary-name scheme, the cleanup of what a killed writer left, and one file lock.

- `open_regular` / `read_regular_bytes` / `read_regular_text`: the one way an input file (a
  spec, a prompt file, a log, a store's own file) is read. A path that is not a regular file
  (a device such as /dev/zero, a FIFO, a socket, a folder) is refused before a byte is read:
  it is opened without blocking (`O_NONBLOCK`, so a FIFO with no writer does not hang the
  open) and checked with `fstat` on the descriptor itself, so a file swapped in between a
  check and the open is refused too. A read never takes more than `limit` bytes
  (MAX_INPUT_BYTES unless told): a larger file is refused, never read whole. Both refusals
  are `OSError`s (`NotRegularFile`, `FileTooLarge`), so a caller that turns an unreadable file
  into its package's error turns these into it too.

- `write_bytes_atomic` / `write_text_atomic`: a reader sees the old file or the new one, never
  a torn one; `durable=True` (the default) also fsyncs, so the new file survives a power cut.
- `atomic_path(final)`: the same for a writer that needs a path of its own (Parquet): write to
  the path it yields; on leaving the block it is fsynced and renamed into place, and on an
  error (Ctrl-C included) it is removed.
- The temporary file is `.<name>.<pid>-<8 hex>.tmp` beside the final file: unique per writer,
  so two writers of one file never write into each other's temporary file, and hidden, so no
  listing of a folder's documents sees it. `clear_stale_temps` removes those a killed writer
  left; a writer calls it where it opens its folder.
- `lock(path, timeout=...)`: an exclusive OS lock (filelock: flock on POSIX), released when the
  holder's process ends however it ends; waiting longer than `timeout` raises `LockTimeout`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

from prove_common.errors import UserError

if TYPE_CHECKING:
    from filelock import BaseFileLock

__all__ = [
    "DEFAULT_LOCK_TIMEOUT_S",
    "MAX_INPUT_BYTES",
    "STALE_AFTER_S",
    "FileTooLarge",
    "HeldLock",
    "LockTimeout",
    "NotRegularFile",
    "atomic_path",
    "clear_stale_temps",
    "file_kind",
    "fsync_file",
    "lock",
    "open_regular",
    "read_regular_bytes",
    "read_regular_text",
    "temp_path",
    "write_bytes_atomic",
    "write_text_atomic",
]

DEFAULT_LOCK_TIMEOUT_S = 60.0
STALE_AFTER_S = 60.0  # a temporary file younger than this may still be written by a live writer
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]{8}\.tmp$")

PathLike = str | os.PathLike[str]

MAX_INPUT_BYTES = 64 << 20  # 64 MiB: the most any input file (a spec, a prompt, a store's JSON) is read
_READ_CHUNK = 1 << 20

_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def file_kind(mode: int) -> str:
    """What a file of this `st_mode` is, in words: "a regular file", "a FIFO (named pipe)", ..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


class NotRegularFile(OSError):
    """An input path that is not a regular file (a device, a FIFO, a socket, a folder): refused
    before it is read. `kind` says what it is; `str()` is one line naming the path."""

    def __init__(self, path: PathLike, mode: int) -> None:
        self.kind = file_kind(mode)
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        super().__init__(code, f"it is {self.kind}, not a regular file", os.fspath(path))
        self.mode = mode

    def __str__(self) -> str:
        return f"{self.filename} is {self.kind}, not a regular file"


class FileTooLarge(OSError):
    """An input file larger than the reader's limit: refused, never read whole."""

    def __init__(self, path: PathLike, limit: int) -> None:
        super().__init__(errno.EFBIG, f"it is larger than {_size(limit)}, the most read", os.fspath(path))
        self.limit = limit

    def __str__(self) -> str:
        return f"{self.filename} is larger than {_size(self.limit)}, the most an input file is read"


def _size(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


@contextlib.contextmanager
def open_regular(path: PathLike) -> Iterator[BinaryIO]:
    """`path` opened for reading in binary, or NotRegularFile before a byte is read when it is not
    a regular file (a symlink to one is one). FileNotFoundError and the other OSErrors of
    `open` are raised as they are."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a regular file never blocks; reads behave as usual
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_regular_bytes(path: PathLike, *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """A regular file's bytes, at most `limit` of them: NotRegularFile for anything else,
    FileTooLarge for a file larger than `limit` (one growing while it is read included)."""
    with open_regular(path) as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise FileTooLarge(path, limit)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = handle.read(min(_READ_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    if size > limit:
        raise FileTooLarge(path, limit)
    return b"".join(chunks)


def read_regular_text(path: PathLike, *, encoding: str = "utf-8", limit: int = MAX_INPUT_BYTES) -> str:
    """`read_regular_bytes` decoded (UnicodeDecodeError when it is not `encoding`), with no newline
    translation: the text is exactly the file's."""
    return read_regular_bytes(path, limit=limit).decode(encoding)


def temp_path(final: PathLike) -> Path:
    """The temporary file a writer of `final` writes first: `.<name>.<pid>-<8 hex>.tmp` beside it."""
    path = Path(final)
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def fsync_file(path: PathLike) -> None:
    """Make a written file's bytes durable (a power cut keeps them)."""
    fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(final: PathLike, *, durable: bool = True) -> Iterator[Path]:
    """Yield the temporary path to write `final` to; it replaces `final` when the block ends.

    The block must create the file at the yielded path. With `durable`, it is fsynced before
    the rename. On any exception (KeyboardInterrupt included) it is removed and `final` is
    left as it was.
    """
    target = Path(final)
    tmp = temp_path(target)
    try:
        yield tmp
        if durable:
            fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: PathLike, data: bytes, *, durable: bool = True, mode: int = 0o666) -> None:
    """Replace `path` with `data` so that a reader sees the old or the new file, never a torn one.

    `durable=False` skips the fsync: still atomic for any reader and after a killed process,
    only not across a power cut. `mode` is the new file's permission bits (before the umask),
    as for `open`.
    """
    with atomic_path(path, durable=False) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())


def write_text_atomic(path: PathLike, text: str, *, durable: bool = True, encoding: str = "utf-8") -> None:
    """`write_bytes_atomic` of `text` encoded: the bytes are exactly the text's, with no newline
    translation on any platform."""
    write_bytes_atomic(path, text.encode(encoding), durable=durable)


def _running(pid: int) -> bool:
    """Whether process `pid` runs on this machine (True when that cannot be told)."""
    if pid == os.getpid():
        return True  # another thread of this process may be writing it
    if os.name != "posix":
        return True  # pragma: no cover - no signal-0 probe (os.kill would end the process)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # PermissionError: it runs, as another user
    return True


def clear_stale_temps(folder: PathLike, name: str | None = None, *, every_writer: bool = False) -> list[Path]:
    """Remove the temporary files of this module's scheme that killed writers left in `folder`
    (only those of the final file `name`, when given); return what was removed.

    A temporary file counts as left behind when the process named in it is no longer running
    and it is older than STALE_AFTER_S, so a live writer's file (of another process, or of a
    process this machine cannot see) is never taken from under it. `every_writer=True` removes
    them all: for a caller that holds the folder's one writer lock, so no one else writes there.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    now = time.time()
    for entry in entries:
        match = _TEMP.match(entry.name)
        if match is None or (name is not None and match["name"] != name):
            continue
        if not every_writer:
            try:
                young = now - entry.stat(follow_symlinks=False).st_mtime < STALE_AFTER_S
            except FileNotFoundError:
                continue  # renamed into place meanwhile
            if young or _running(int(match["pid"])):
                continue
        path = Path(entry.path)
        try:
            path.unlink()
        except OSError:
            continue  # gone meanwhile, or not ours to remove: the write at hand goes on
        removed.append(path)
    return removed


class LockTimeout(UserError):
    """Another process held the lock longer than this one was willing to wait."""

    def __init__(self, path: PathLike, timeout: float) -> None:
        super().__init__(
            f"{path} is locked by another process (waited {timeout:g} s)",
            suggestions=["wait for the other command using it to end, then run this one again"],
        )
        self.path = Path(path)
        self.timeout = timeout


class HeldLock:
    """A lock this process holds: `release()` it, or use it as a context manager (released at
    the end of the block). Releasing twice is harmless."""

    def __init__(self, held: BaseFileLock, path: Path) -> None:
        self._held: BaseFileLock | None = held
        self.path = path

    def release(self) -> None:
        if self._held is not None:
            self._held.release()
            self._held = None

    def __enter__(self) -> HeldLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


def lock(path: PathLike, *, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> HeldLock:
    """Take the exclusive lock whose lock file is `path` (created if missing, never removed),
    waiting at most `timeout` seconds (0: do not wait); LockTimeout when another holds it (each
    package's library turns it into its own error type, with its own exit code).

    `with lock(path): ...` for a short hold; `held = lock(path)` ... `held.release()` for one
    that outlives a block (a run's writer lock). The OS releases it if the process dies.
    """
    from filelock import FileLock, Timeout  # filelock: ~25 ms, only when a file is locked

    file_lock = FileLock(os.fspath(path), timeout=timeout)
    try:
        file_lock.acquire()
    except Timeout:
        raise LockTimeout(path, timeout) from None
    return HeldLock(file_lock, Path(path))
