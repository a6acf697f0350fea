"""The dashboard's drawing cache, through the installed `poisson-prove dashboard`: a page drawn
from the cache equals the page drawn fresh; an entry is used only for the very run (and code and
options) it was drawn for, so a damaged or foreign entry, an edited manifest or a batch file
that moved is drawn again."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

MARK = "cachedmarkerxyz"
SECTION_MARK = "keptsectionxyz"  # the run's section is not rendered again from an unchanged entry


def _page(prove: Any, store: Path) -> str:
    result = prove("dashboard")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    html = (store / "dashboard.html").read_text(encoding="utf-8")
    return re.sub(r"written [0-9T:.\-+Z]+", "written -", html)  # the generation time differs


def _runs(store: Path) -> list[Path]:
    return sorted(p.parent for p in store.glob("*/manifest.json"))


def _mark(entry: Path) -> None:
    """Write a visible marker into a run entry's view, and another into the run's section of
    the page kept with it, its key left as it was."""
    document = json.loads(entry.read_text(encoding="utf-8"))
    document["payload"]["view"]["target"] = MARK
    section = document["payload"]["section"]
    section["html"] = section["html"].replace("</summary>", f" {SECTION_MARK}</summary>", 1)
    entry.write_text(json.dumps(document), encoding="utf-8")


def test_a_page_from_the_cache_equals_the_fresh_one_and_a_changed_run_is_drawn_again(
    prove: Any, paired_store: Path
) -> None:
    cache = paired_store / ".dashboard-cache"
    fresh = _page(prove, paired_store)
    older, newer = _runs(paired_store)
    entries = {p.name for p in cache.iterdir()}
    assert {f"run-{older.name}.json", f"run-{newer.name}.json"} <= entries
    assert any(name.startswith("cmp-") for name in entries)
    assert not [name for name in entries if not name.endswith(".json")]  # no temporary left
    assert _page(prove, paired_store) == fresh  # every run and comparison from the cache

    # the cache is what was shown: a marker written into an entry (its key intact) is on the page
    entry = cache / f"run-{older.name}.json"
    _mark(entry)
    marked = _page(prove, paired_store)
    assert MARK in marked and SECTION_MARK in marked

    # the run's manifest edited: the entry no longer fits, the run is read and drawn again
    manifest = json.loads((older / "manifest.json").read_text(encoding="utf-8"))
    manifest["target"] = "edited:rollout"
    (older / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    edited = _page(prove, paired_store)
    assert MARK not in edited and SECTION_MARK not in edited and "edited:rollout" in edited
    shutil.rmtree(cache)
    assert _page(prove, paired_store) == edited  # equal to the page drawn with no cache at all

    # a batch file that moved (as a resumed run's does): drawn again
    _mark(entry)
    assert MARK in _page(prove, paired_store)
    batch = sorted((older / "episodes").glob("*.parquet"))[0]
    stat = batch.stat()
    os.utime(batch, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert _page(prove, paired_store) == edited

    # another run's entry copied in its place (a foreign entry) and damaged ones: never trusted
    _mark(cache / f"run-{newer.name}.json")
    newer_marked = _page(prove, paired_store)
    assert MARK in newer_marked
    shutil.copy(cache / f"run-{newer.name}.json", entry)
    assert _page(prove, paired_store) == newer_marked  # the copy is not the older run's
    shutil.rmtree(cache)
    _page(prove, paired_store)
    # each entry damaged another way, all in one page (each dashboard run draws for seconds)
    damages = (b"", b"{not json", b'{"key": 1, "payload": []}', b"[" * 100_000)
    entries_now = sorted(cache.glob("*.json"))
    assert len(entries_now) >= 3
    for i, path in enumerate(entries_now):
        path.write_bytes(damages[i % len(damages)])
    assert _page(prove, paired_store) == edited
