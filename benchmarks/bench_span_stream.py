"""Cost of streaming spans from the child of --episode-timeout, next to a plain episode.

Per span, best of 5 rounds: `record()` and a `with step()` block in an episode whose span list
is a plain list (the sweep's process, threads, workers: no streaming) and in one whose list is
a StreamedSpans sending over a real multiprocessing Pipe that a reader thread drains, as the
sweep does while it waits for a child's answer. Prints the ratio streamed / plain.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import sys
import threading
import time
from typing import Any

from poisson_prove import record, recording, step
from poisson_prove.episode.stream import SpansSoFar, StreamedSpans


def per_span_ns(kind: str, spans: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        _, token = recording.begin_episode()
        start = time.perf_counter_ns()
        if kind == "record":
            for n in range(spans):
                record("tool answered", status=200, n=n)
        else:
            for n in range(spans):
                with step("call tool", tool="search") as attrs:
                    attrs["n"] = n
        best = min(best, (time.perf_counter_ns() - start) / spans)
        recording.end_episode(token)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=20_000)
    args = parser.parse_args()
    plain = {kind: per_span_ns(kind, args.spans, 5) for kind in ("record", "step")}

    reader_end, writer_end = multiprocessing.Pipe(duplex=False)
    done = threading.Event()

    def drain() -> None:
        stream = SpansSoFar(0)
        while not done.is_set() or reader_end.poll(0):
            if reader_end.poll(0.05):
                message: Any = reader_end.recv()
                if message is None:
                    return
                stream.take(message)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    lock = threading.Lock()

    def send(message: Any) -> None:
        with lock:
            writer_end.send(message)

    recording._STREAMING[0] = lambda: StreamedSpans(send, 0)
    try:
        streamed = {kind: per_span_ns(kind, args.spans, 5) for kind in ("record", "step")}
    finally:
        recording._STREAMING[0] = None
        writer_end.send(None)
        done.set()
        reader.join(5)
    print(f"per span, best of 5 rounds of {args.spans:,}")
    for kind in ("record", "step"):
        print(f"  {kind:6}  plain {plain[kind]:7.0f} ns   streamed {streamed[kind]:7.0f} ns   "
              f"{streamed[kind] / plain[kind]:5.1f}x plain")
    return 0


if __name__ == "__main__":
    sys.exit(main())
