"""Capture overhead: @monitor per call, and capture+export cost as the store grows.

1. Cost per call of a function taking a string: undecorated, @monitor outside a trace, and
   @monitor inside a trace (the span's recording; the trace's close is measured apart).
2. Capture+export of one 3-span trace with FileExporter into an empty store and into a store
   already holding N traces (default 50,000), in alternating rounds of the same run. The
   index compaction a capture occasionally does is measured too and reported amortised.

3. What recording each call's reads and imports costs (proveai.capture.reads: the audit hook
   on open, resolving paths and the import graph at the trace's close): the same captures in
   fresh interpreters with the recording on and off, alternating, for the 3-span trace above
   and for one whose agents each read a prompt file.

4. What joining an OpenTelemetry trace costs (proveai.capture.otel; `--only-otel` runs it
   alone): @monitor inside a trace and a trace's open + one call + close, in fresh
   interpreters, alternating: OpenTelemetry not imported; imported with no provider and no
   span (not joined); an SDK TracerProvider with no span active (joined, the trace's own id);
   a user span active (joined to it).

Prints ratios; goals: inside a trace <= 5 us per call, at 50k traces <= 2x the empty store,
recording reads <= 1.05x without, no cost while no OpenTelemetry span or provider is there.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from proveai import FileExporter, monitor, trace
from proveai.store.traces.index import JOURNAL, MANIFEST, read_index


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


def trace_close_ns(calls: int, clock: Callable[[], int] = time.perf_counter_ns) -> float:
    """What closing a trace of `calls` spans costs per span (freezing; no exporter)."""
    tr = trace("bench")
    tr.__enter__()
    for _ in range(calls):
        monitored("a short ticket")
    start = clock()
    tr.__exit__(None, None, None)
    return (clock() - start) / calls


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


@monitor("classify_p")
def classify_p(ticket: str) -> str:
    return Path("prompts/classify.md").read_text(encoding="utf-8")[:7]


@monitor("draft_p")
def draft_p(category: str) -> str:
    return Path("prompts/draft.md").read_text(encoding="utf-8") + category


def capture_reading_prompts(root: Path) -> None:
    with trace("bench", exporters=[FileExporter(root)]):
        draft_p(classify_p("my order arrived broken"))


def reads_child(mode: str, captures: int, rounds: int) -> int:
    """One interpreter's capture timings (best round, ns of CPU time: on a machine shared with
    other work the wall clock mostly measures the others), recording reads on or off, as JSON."""
    if mode == "off":
        # a benchmark-only switch: install() then finds the hook "already decided" and adds none
        import proveai.capture.reads as reads  # the module's state, to switch the recording off

        reads._installed = False
    project = Path.cwd()
    plain_store, prompt_store = project / "proveai" / "plain", project / "proveai" / "prompts"
    capture_into(plain_store)
    capture_reading_prompts(prompt_store)  # warm: imports, first index write
    plain_ns, prompt_ns = [], []
    for _ in range(rounds):
        gc.collect()
        start = time.process_time_ns()
        for _ in range(captures):
            capture_into(plain_store)
        plain_ns.append((time.process_time_ns() - start) / captures)
        start = time.process_time_ns()
        for _ in range(captures):
            capture_reading_prompts(prompt_store)
        prompt_ns.append((time.process_time_ns() - start) / captures)
    close = min(trace_close_ns(5_000, clock=time.process_time_ns) for _ in range(rounds))
    print(json.dumps({"plain": min(plain_ns), "prompts": min(prompt_ns), "close": close}))
    return 0


def reads_overhead(scratch: Path, captures: int, rounds: int) -> None:
    """Fresh interpreters with the recording on and off, alternating; the best of each."""
    best: dict[str, dict[str, float]] = {}
    for index in range(rounds):
        for mode in ("on", "off") if index % 2 == 0 else ("off", "on"):
            project = scratch / f"reads-{mode}-{index}"
            (project / "prompts").mkdir(parents=True)
            (project / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
            (project / "prompts" / "classify.md").write_text("billing: classify the ticket\n")
            (project / "prompts" / "draft.md").write_text("Draft a short reply about ")
            child = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--reads-child", mode,
                 "--captures", str(captures), "--rounds", "3"],
                cwd=project, capture_output=True, text=True, timeout=600, check=True,
            )
            found = json.loads(child.stdout.strip().splitlines()[-1])
            for key, value in found.items():
                best.setdefault(mode, {})[key] = min(value, best.get(mode, {}).get(key, float("inf")))
    print("recording reads and imports (fresh interpreters, on vs off, best of "
          f"{rounds} alternating; CPU time)")
    labels = {"plain": "3-span trace, no file read", "prompts": "2 agents reading a prompt each"}
    for key, label in labels.items():
        on, off = best["on"][key], best["off"][key]
        print(f"  {label:31s} {on / 1e6:7.3f} ms on  {off / 1e6:7.3f} ms off   {on / off:5.3f}x"
              " (goal <= 1.05x)")
    on, off = best["on"]["close"], best["off"]["close"]
    print(f"  {'trace close per span':31s} {on / 1e3:7.2f} us on  {off / 1e3:7.2f} us off   {on / off:5.3f}x"
          " (no exporter)")


OTEL_MODES = {
    "none": "OpenTelemetry not imported",
    "loaded": "imported, no provider, no span",
    "provider": "SDK provider, no span (joined)",
    "span": "a user span active (joined)",
}


def otel_child(mode: str, calls: int, rounds: int) -> int:
    """One interpreter's costs under one OpenTelemetry `mode` (CPU time, best round), as JSON:
    a monitored call inside a trace, and a trace's open + one call + close (no exporter)."""
    import contextlib  # the benchmark's own switch between modes, only in this child

    span: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if mode != "none":
        from opentelemetry import trace as otel  # the mode under test: OpenTelemetry loaded
        from opentelemetry.sdk.trace import TracerProvider  # the mode under test, as above

        if mode in ("provider", "span"):
            otel.set_tracer_provider(TracerProvider())  # no processor: what is timed is the join
        if mode == "span":
            span = otel.get_tracer("bench").start_as_current_span("user-root")
    call_ns, trace_ns = [], []
    with span:
        per_call_ns(monitored, 1_000, 1, inside=True)  # warm
        for _ in range(rounds):
            gc.collect()
            with trace("bench"):
                start = time.process_time_ns()
                for _ in range(calls):
                    monitored("a short ticket")
                call_ns.append((time.process_time_ns() - start) / calls)
            start = time.process_time_ns()
            for _ in range(calls // 20):
                with trace("bench"):
                    monitored("a short ticket")
            trace_ns.append((time.process_time_ns() - start) / (calls // 20))
    print(json.dumps({"call": min(call_ns), "trace": min(trace_ns)}))
    return 0


def otel_overhead(calls: int, rounds: int, against: Path | None = None,
                  only: list[str] | None = None) -> None:
    """Fresh interpreters per mode, the modes' order turned each round; the best of each.
    With `against` (another checkout's `src`), each mode runs under both sources, alternating,
    and the ratio is this checkout's over that one's."""
    best: dict[tuple[str, str], dict[str, float]] = {}
    modes = only or list(OTEL_MODES)
    sources = ["this", "that"] if against is not None else ["this"]
    for index in range(rounds):
        for mode in modes if index % 2 == 0 else modes[::-1]:
            for source in sources if index % 2 == 0 else sources[::-1]:
                env = dict(os.environ)
                if source == "that" and against is not None:
                    env["PYTHONPATH"] = str(against)
                child = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--otel-child", mode,
                     "--calls", str(calls), "--rounds", "3"],
                    capture_output=True, text=True, timeout=600, check=True, env=env,
                )
                found = json.loads(child.stdout.strip().splitlines()[-1])
                seen = best.setdefault((mode, source), {})
                for key, value in found.items():
                    seen[key] = min(value, seen.get(key, float("inf")))
    print(f"joining OpenTelemetry (fresh interpreters, best of {rounds} alternating; CPU time)")
    base = best.get(("none", "this")) or best[(modes[0], "this")]
    for mode in modes:
        label = OTEL_MODES[mode]
        call, whole = best[(mode, "this")]["call"], best[(mode, "this")]["trace"]
        line = (f"  {label:32s} @monitor in a trace {call:7.0f} ns {call / base['call']:5.2f}x   "
                f"trace + 1 call {whole / 1e3:6.2f} us {whole / base['trace']:5.2f}x")
        if against is not None:
            old = best[(mode, "that")]
            line += f"   vs {against}: {call / old['call']:5.2f}x / {whole / old['trace']:5.2f}x"
        print(line)


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
    parser.add_argument("--reads-rounds", type=int, default=6, help="interpreters per mode for part 3")
    parser.add_argument("--reads-child", choices=("on", "off"), help=argparse.SUPPRESS)
    parser.add_argument("--only-reads", action="store_true", help="run part 3 only")
    parser.add_argument("--otel-rounds", type=int, default=6, help="interpreters per mode for part 4")
    parser.add_argument("--otel-child", choices=tuple(OTEL_MODES), help=argparse.SUPPRESS)
    parser.add_argument("--only-otel", action="store_true", help="run part 4 only")
    parser.add_argument("--against", type=Path, help="part 4: another checkout's src to compare with")
    parser.add_argument("--otel-modes", nargs="+", choices=tuple(OTEL_MODES), help="part 4: these modes only")
    args = parser.parse_args()
    if args.reads_child:
        return reads_child(args.reads_child, args.captures, args.rounds)
    if args.otel_child:
        return otel_child(args.otel_child, args.calls, args.rounds)
    if args.only_otel:
        otel_overhead(args.calls, args.otel_rounds, args.against, args.otel_modes)
        return 0
    if args.only_reads:
        scratch = Path(tempfile.mkdtemp(prefix="proveai-bench-"))
        try:
            reads_overhead(scratch, args.captures, args.reads_rounds)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return 0

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
        print()
        reads_overhead(scratch, args.captures, args.reads_rounds)
        print()
        otel_overhead(args.calls, args.otel_rounds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
