"""canonical_json is byte-for-byte the serialization cache keys and snapshot hashes were taken
over; write_json_atomic never leaves a torn or temporary file; the UTC stamps read as before."""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import math
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from prove_common.jsonio import canonical_json, utc_iso, utc_now, utc_now_iso, write_json_atomic


def _old_cache_canonical(value: Any) -> str:
    # proveai/cache.py `_canonical`, as it stood when the shared one replaced it
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _old_snapshot_canonical(value: Any) -> str:
    # proveai/snapshot/model.py `canonical_json`, as it stood when the shared one replaced it
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


TRICKY = [
    {"b": 1, "a": [3, 2, 1], "ä": "ünïcödé ✓ 🙂", "emoji🙂": None},
    {"nested": {"z": {"y": {"x": [{"k": 2, "j": 1}]}}}},
    [0.1 + 0.2, 1e300, -0.0, 1e-7, 12345678901234567890],
    {"nan": math.nan, "inf": math.inf, "-inf": -math.inf},
    {
        "when": dt.datetime(2026, 1, 31, 12, 0, tzinfo=dt.UTC),
        "path": Path("/a/b"),
        "dec": decimal.Decimal("1.10"),
    },
    {"tuple": (1, "two"), "bool": True, "false": False, "empty": {}, "list": []},
    "a string with \"quotes\", a \\ backslash, a\ttab, a\nnewline and \u0000 a NUL",
    {"messages": [{"role": "system", "content": "[/oops] {not: json}"}], "temperature": 0},
]


@pytest.mark.parametrize("value", TRICKY, ids=range(len(TRICKY)))
def test_canonical_json_is_byte_identical_to_both_old_versions(value: Any) -> None:
    text = canonical_json(value)
    assert text.encode("utf-8") == _old_cache_canonical(value).encode("utf-8")
    assert text.encode("utf-8") == _old_snapshot_canonical(value).encode("utf-8")


def test_canonical_json_pinned_bytes() -> None:
    # a stored cache key / snapshot hash depends on these exact bytes
    value = {"model": "m", "messages": [{"role": "user", "content": "héllo"}], "n": 1.5, "x": None}
    text = canonical_json(value)
    assert text == '{"messages":[{"content":"héllo","role":"user"}],"model":"m","n":1.5,"x":null}'
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == hashlib.sha256(
        '{"messages":[{"content":"héllo","role":"user"}],"model":"m","n":1.5,"x":null}'.encode()
    ).hexdigest()


def test_write_json_atomic_round_trips_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    write_json_atomic(target, {"b": "ü", "a": [1, 2]})
    write_json_atomic(target, {"b": "ü2", "a": [1, 2, 3]}, durable=False)
    assert json.loads(target.read_text(encoding="utf-8")) == {"b": "ü2", "a": [1, 2, 3]}
    text = target.read_text(encoding="utf-8")
    assert "ü2" in text and text.endswith("\n")  # non-ASCII kept, a final newline
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_a_reader_sees_the_old_or_the_new_document_never_a_torn_one(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    write_json_atomic(target, {"n": 0, "pad": "x" * 20000})
    stop = threading.Event()
    torn: list[str] = []

    def read() -> None:
        while not stop.is_set():
            try:
                json.loads(target.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                torn.append(str(exc))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(1, 150):
            write_json_atomic(target, {"n": n, "pad": "x" * 20000}, durable=False)
    finally:
        stop.set()
        reader.join()
    assert torn == []
    assert json.loads(target.read_text(encoding="utf-8"))["n"] == 149


def test_utc_now_is_aware_utc_and_its_text_ends_in_z() -> None:
    now = utc_now()
    assert now.tzinfo is not None and now.utcoffset() == dt.timedelta(0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", utc_now_iso())
    # the form outcome stamps were written in (microseconds, so events order within a second)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", utc_now_iso("microseconds"))
    # the text is the clock's moment, cut to the second: between two readings, however slow
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    parsed = dt.datetime.fromisoformat(utc_now_iso().replace("Z", "+00:00"))
    after = dt.datetime.now(dt.UTC)
    assert before <= parsed <= after


def test_utc_iso_is_the_one_text_of_a_stored_moment() -> None:
    moment = dt.datetime(2026, 1, 31, 12, 0, 5, 123456, tzinfo=dt.UTC)
    assert utc_iso(moment) == "2026-01-31T12:00:05Z"  # the run store's created, events' at
    assert utc_iso(moment, "microseconds") == "2026-01-31T12:00:05.123456Z"  # the trace index
