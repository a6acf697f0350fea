"""JSON in and out, written one way for both packages: the canonical form content hashes and
cache keys are taken over, atomic writes of JSON documents, and the UTC clock stamps they carry.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
from pathlib import Path
from typing import Any

__all__ = ["canonical_json", "utc_now", "utc_now_iso", "write_json_atomic"]


def canonical_json(value: Any) -> str:
    """The one serialization every content hash and cache key is taken over: sorted keys, no
    spaces, non-ASCII as it is, anything JSON cannot hold as `str()`. Changing a byte of it
    changes every stored hash and cache key."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def utc_now() -> dt.datetime:
    """Now, as an aware UTC datetime."""
    return dt.datetime.now(dt.UTC)


def utc_now_iso(timespec: str = "seconds") -> str:
    """Now as ISO-8601 text ending in `Z` (`2026-01-31T12:00:00Z`); `timespec` as in
    `datetime.isoformat` (`"microseconds"` for stamps that must order events within a second)."""
    return utc_now().isoformat(timespec=timespec).replace("+00:00", "Z")


def write_json_atomic(path: Path, document: Any, *, durable: bool = True) -> None:
    """Write JSON to `path` so that a reader sees the old or the new file, never a torn one.

    `durable=False` skips the fsync: still atomic for any reader and after a killed process,
    only not across a power cut (for the manifest's per-batch counts, a convenience).
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        if durable:
            os.fsync(handle.fileno())
    os.replace(tmp, path)
