"""Graded verdicts cached per (old hash, new hash, judge model): a re-verify costs nothing.

Lives at proveai/snapshots/.judge_cache.json with a .gitignore beside it, so committing the
snapshots folder never commits the cache. Only decided verdicts are cached: a judge that
could not run ("skip") is asked again next time.

The file is local state anyone with the folder can edit, so what it can make a verdict say is
bounded: an entry records the pair and the judge it was decided for and is served only for
them (an entry copied under another key is not), and `unchanged` is never served for two
different hashes (the tiers that call such outputs unchanged are asked again; only drifted
or regressed, the judge's verdicts, are reused).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from prove_common.files import clear_stale_temps, read_regular_text, write_text_atomic
from proveai.store.layout import lock

CACHE_NAME = ".judge_cache.json"
GITIGNORE_LINES = (
    "/.judge_cache.json", "/.judge_cache.json.lock", "/.trusted_invocations.json",
    "/.trusted_invocations.json.lock", "/.*.tmp",
)


_UNCHANGED = "unchanged"
_PAIR_FIELDS = ("pinned", "fresh", "judge_model")  # what an entry was decided for, checked on read


def cache_key(old_hash: str, new_hash: str, judge_model: str | None) -> str:
    return f"{old_hash}|{new_hash}|{judge_model or '-'}"


def _pair(old_hash: str, new_hash: str, judge_model: str | None) -> dict[str, str]:
    return {"pinned": old_hash, "fresh": new_hash, "judge_model": judge_model or "-"}


def _servable(
    entry: object, old_hash: str, new_hash: str, judge_model: str | None
) -> TypeGuard[dict[str, Any]]:
    """True when `entry` was decided for exactly this pair and judge, and does not call two
    different outputs unchanged."""
    if not isinstance(entry, dict):
        return False
    if any(entry.get(name) != value for name, value in _pair(old_hash, new_hash, judge_model).items()):
        return False
    return not (entry.get("status") == _UNCHANGED and old_hash != new_hash)


class JudgeCache:
    """A small JSON map from cache_key to {"status", "rationale", "tier", ...}."""

    def __init__(self, snapshots_dir: Path, enabled: bool = True) -> None:
        self.path = snapshots_dir / CACHE_NAME
        self.enabled = enabled
        self.hits = 0
        self.misses = 0
        self._entries: dict[str, dict[str, Any]] | None = None
        self._dirty: dict[str, dict[str, Any]] = {}

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            try:
                data = json.loads(read_regular_text(self.path))
                self._entries = data if isinstance(data, dict) else {}
            except (OSError, ValueError, RecursionError):
                self._entries = {}  # a missing or damaged cache is only a slower run
        return self._entries

    def get(self, old_hash: str, new_hash: str, judge_model: str | None) -> dict[str, Any] | None:
        """The verdict decided for this pair and judge, without the pair's fields; None for a
        miss, and for an entry that fails `_servable` (it is graded again and replaced)."""
        if not self.enabled:
            return None
        entry = self._load().get(cache_key(old_hash, new_hash, judge_model))
        if not _servable(entry, old_hash, new_hash, judge_model):
            self.misses += 1
            return None
        self.hits += 1
        return {k: v for k, v in entry.items() if k not in _PAIR_FIELDS}

    def put(self, old_hash: str, new_hash: str, judge_model: str | None, verdict: Mapping[str, Any]) -> None:
        """Cache a decided verdict with the pair it was decided for; `unchanged` for two
        different hashes is not cached (it would never be served)."""
        if not self.enabled or (verdict.get("status") == _UNCHANGED and old_hash != new_hash):
            return
        key = cache_key(old_hash, new_hash, judge_model)
        entry = {**dict(verdict), **_pair(old_hash, new_hash, judge_model)}
        self._load()[key] = entry
        self._dirty[key] = entry

    def save(self) -> None:
        """Merge this run's new entries into the file (others may have written meanwhile)."""
        if not self.enabled or not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        ensure_gitignore(self.path.parent)
        with lock(self.path.with_name(self.path.name + ".lock")):
            # every save holds the lock, so a temporary file of the cache here is a killed save's
            clear_stale_temps(self.path.parent, self.path.name, every_writer=True)
            try:
                current = json.loads(read_regular_text(self.path))
                if not isinstance(current, dict):
                    current = {}
            except (OSError, ValueError, RecursionError):
                current = {}
            current.update(self._dirty)
            write_text_atomic(self.path, json.dumps(current, sort_keys=True, indent=1) + "\n")
        self._dirty.clear()


def ensure_gitignore(snapshots_dir: Path) -> None:
    """Keep the cache (and lock/temporary files) out of git without touching user lines."""
    path = snapshots_dir / ".gitignore"
    try:
        existing = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    except OSError:
        return
    missing = [line for line in GITIGNORE_LINES if line not in existing]
    if not missing:
        return
    snapshots_dir.mkdir(parents=True, exist_ok=True)
    text = "\n".join([*existing, *missing]) + "\n"
    if not existing:
        text = (
            "# proveai: the judge cache and the trusted invocations are local state, never part "
            "of a pinned snapshot\n" + text
        )
    write_text_atomic(path, text)
