"""Capture overhead: @monitor per call, and capture+export cost as the store grows.

1. Cost per call of a function taking a string: undecorated, @monitor outside a trace, and
   @monitor inside a trace (the span's recording; the trace's close is measured apart).
2. Capture+export of one 3-span trace with FileExporter into an empty store and into a store
   already holding N traces (default 50,000), in alternating rounds of the same run. The
   index compaction a capture occasionally does is measured too and reported amortised.

Prints ratios; goals: inside a trace <= 5 us per call, at 50k traces <= 2x the empty store.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from proveai import FileExporter, monitor, trace
from proveai.traces.index import JOURNAL, MANIFEST, read_index


def plain(text: str) -> str:
    return text


monitored = monitor("agent")(plain)


def per_call_ns(fn, calls: int, repeats: int, inside: bool) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        if inside:
            with trace("bench") as t:
                start = time.perf_counter_ns()
                for _ in range(calls):
                    fn("a short ticket")
                elapsed = time.perf_counter_ns() - start
            del t
        else:
            start = time.perf_counter_ns()
            for _ in range(calls):
                fn("a short ticket")
            elapsed = time.perf_counter_ns() - start
        best = min(best, elapsed / calls)
    return best


def trace_close_ns(calls: int) -> float:
    """What closing a trace of `calls` spans costs per span (freezing; no exporter)."""
    tr = trace("bench")
    tr.__enter__()
    for _ in range(calls):
        monitored("a short ticket")
    start = time.perf_counter_ns()
    tr.__exit__(None, None, None)
    return (time.perf_counter_ns() - start) / calls


@monitor("classify")
def classify(ticket: str) -> str:
    return "billing"


@monitor("lookup", kind="TOOL")
def lookup(category: str) -> dict:
    return {"category": category, "history": 2}


@monitor("draft")
def draft(category: str, history: dict) -> str:
    return f"reply about {category} [1]"


def capture_into(root: Path) -> None:
    with trace("bench", exporters=[FileExporter(root)]):
        category = classify("my order arrived broken")
        draft(category, lookup(category))


def populate(root: Path, n: int) -> None:
    """A store holding n traces: real files, manifest, outcomes and detections, written directly."""
    root.mkdir(parents=True)
    capture_into(root)
    (seed,) = [p for p in root.glob("*.json") if len(p.stem) == 32]
    document = seed.read_text()
    seed_id = seed.stem
    entry = read_index(root).entries[seed_id]
    detection = (root / f"{seed_id}.detection.json").read_text()
    lines, outcomes = [], []
    for i in range(n):
        trace_id = f"{i:032x}"
        (root / f"{trace_id}.json").write_text(document.replace(seed_id, trace_id))
        (root / f"{trace_id}.detection.json").write_text(detection.replace(seed_id, trace_id))
        lines.append(f"{json.dumps(trace_id)}: {json.dumps(entry, separators=(',', ':'))}")
        outcomes.append(json.dumps({"trace_id": trace_id, "check_name": "composite", "label": "good",
                                    "score": 1.0, "source": "composite"}))
    (root / MANIFEST).write_text("{\n" + ",\n".join(lines) + "\n}\n")
    (root / "outcomes.jsonl").write_text("\n".join(outcomes) + "\n")
    (root / JOURNAL).write_bytes(b"")
    for path in (seed, root / f"{seed_id}.detection.json"):
        path.unlink()


def timed_captures(root: Path, count: int) -> float:
    gc.collect()
    start = time.perf_counter_ns()
    for _ in range(count):
        capture_into(root)
    return (time.perf_counter_ns() - start) / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stored", type=int, default=50_000, help="traces already in the big store")
    parser.add_argument("--captures", type=int, default=200, help="captures per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()

    base = per_call_ns(plain, args.calls, 5, inside=False)
    outside = per_call_ns(monitored, args.calls, 5, inside=False)
    inside = per_call_ns(monitored, args.calls, 5, inside=True)
    close = trace_close_ns(args.calls)
    print("per call, one string argument (best of 5)")
    print(f"  undecorated            {base:8.0f} ns")
    print(f"  @monitor outside trace {outside:8.0f} ns   {outside / base:5.1f}x undecorated "
          f"(+{(outside - base):.0f} ns)")
    print(f"  @monitor inside trace  {inside:8.0f} ns   {inside / base:5.1f}x undecorated "
          f"(+{(inside - base) / 1000:.2f} us; goal <= 5 us)")
    print(f"  trace close per span   {close:8.0f} ns   (freezing spans at exit, no exporter)")

    scratch = Path(tempfile.mkdtemp(prefix="proveai-bench-"))
    try:
        empty, big = scratch / "empty", scratch / "big"
        start = time.perf_counter()
        populate(big, args.stored)
        print(f"\nstore of {args.stored:,} traces written in {time.perf_counter() - start:.1f} s")
        empty.mkdir()
        capture_into(empty)
        capture_into(big)  # warm both (imports, first compaction of the empty store)
        small_times, big_times = [], []
        for _ in range(args.rounds):  # alternate so drift on a noisy machine hits both
            small_times.append(timed_captures(empty, args.captures))
            big_times.append(timed_captures(big, args.captures))
        small, large = min(small_times), min(big_times)
        # the occasional compaction: folds the journal into manifest.json (O(store size))
        manifest_bytes = os.stat(big / MANIFEST).st_size
        journal_bytes = os.stat(big / JOURNAL).st_size
        entry_bytes = max(1, journal_bytes // max(1, args.rounds * args.captures + 1))
        start = time.perf_counter_ns()
        read_index(big)
        compaction = time.perf_counter_ns() - start
        per_compaction = max(1, (manifest_bytes // 2) // entry_bytes)  # captures between two
        amortised = large + compaction / per_compaction
        print("capture + export of a 3-span trace (best round)")
        print(f"  empty store            {small / 1e6:8.3f} ms")
        ratio = large / small
        print(f"  {args.stored:,} traces stored  {large / 1e6:8.3f} ms   {ratio:5.2f}x empty (goal <= 2x)")
        print(f"  compaction at that size {compaction / 1e6:7.1f} ms once per ~{per_compaction:,} captures"
              f" -> amortised {amortised / 1e6:.3f} ms = {amortised / small:5.2f}x empty")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
