"""The store lock: one exclusive lock over the index files of a traces folder, held briefly."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]


LOCK = ".lock"


@contextlib.contextmanager
def store_lock(root: Path) -> Iterator[None]:
    """Exclusive lock over the index files of one store (held briefly)."""
    path = root / LOCK
    if fcntl is None:  # pragma: no cover - non-POSIX
        from filelock import FileLock  # filelock: only where fcntl is missing (not POSIX)

        with FileLock(str(path)):
            yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


