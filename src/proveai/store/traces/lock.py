"""The store lock: one exclusive lock over the index files of a traces folder, held briefly."""

from __future__ import annotations

from pathlib import Path

from prove_common.files import HeldLock
from proveai.store.layout import lock

LOCK = ".lock"


def store_lock(root: Path) -> HeldLock:
    """Exclusive lock over the index files of one store (held briefly): `with store_lock(root):`.

    A holder that keeps it past the lock timeout is a ProveAIError for the waiting writer; a
    holder that dies frees it at once (an OS lock).
    """
    return lock(root / LOCK)
