"""JSON in and out, written one way for both packages: the canonical form content hashes and
cache keys are taken over, atomic writes of JSON documents, and the UTC clock stamps they carry.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from typing import Any

from prove_common.files import write_text_atomic

__all__ = ["canonical_json", "utc_iso", "utc_now", "utc_now_iso", "write_json_atomic"]


def canonical_json(value: Any) -> str:
    """The one serialization every content hash and cache key is taken over: sorted keys, no
    spaces, non-ASCII as it is, anything JSON cannot hold as `str()`. Changing a byte of it
    changes every stored hash and cache key."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def utc_now() -> dt.datetime:
    """Now, as an aware UTC datetime."""
    return dt.datetime.now(dt.UTC)


def utc_iso(moment: dt.datetime, timespec: str = "seconds") -> str:
    """An aware UTC datetime as the ISO-8601 text stored files carry: `2026-01-31T12:00:00Z`;
    `timespec` as in `datetime.isoformat` (`"microseconds"` for stamps that must order events
    within a second)."""
    return moment.isoformat(timespec=timespec).replace("+00:00", "Z")


def utc_now_iso(timespec: str = "seconds") -> str:
    """Now as `utc_iso` text (`2026-01-31T12:00:00Z`)."""
    return utc_iso(utc_now(), timespec)


def write_json_atomic(path: str | os.PathLike[str], document: Any, *, durable: bool = True) -> None:
    """Write JSON (two-space indent, non-ASCII as it is, a final newline) to `path` so that a
    reader sees the old or the new file, never a torn one (`prove_common.files`).

    `durable=False` skips the fsync: still atomic for any reader and after a killed process,
    only not across a power cut (for the manifest's per-batch counts, a convenience).
    """
    write_text_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n", durable=durable)
