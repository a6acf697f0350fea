"""@monitor inside a sweep episode against the same call inside a proveai trace.

Per call of a `@monitor` function taking a string, best of `--repeats`:

1. outside any trace or episode (the baseline every ratio is against);
2. inside a proveai trace, everything the trace costs per span: the call's recording and the
   trace's close (freezing its spans, no checks, no exporter), in traces of `--per-episode` calls;
3. inside a sweep episode, everything the episode costs per span: the call recorded into the
   episode's spans (hashes included), and the row's JSON of those spans, in episodes of
   `--per-episode` calls (as `run_into` builds a row, then clears the list).

Prints each per-call time and its ratio to (1); the goal: (3) <= (2).
"""

from __future__ import annotations

import argparse
import gc
import time

from poisson_prove.episode import recording
from poisson_prove.episode.row import spans_json
from proveai import monitor, trace


@monitor("agent")
def agent(text: str) -> str:
    return text


def outside(calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        agent("a short ticket")
    return (time.perf_counter_ns() - start) / calls


def in_traces(calls: int, per: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls // per):
        with trace("bench"):
            for _ in range(per):
                agent("a short ticket")
    return (time.perf_counter_ns() - start) / calls


def in_episodes(calls: int, per: int) -> float:
    spans, token = recording.begin_episode()
    try:
        start = time.perf_counter_ns()
        for _ in range(calls // per):
            for _ in range(per):
                agent("a short ticket")
            spans_json(spans)
            spans.clear()
        return (time.perf_counter_ns() - start) / calls
    finally:
        recording.end_episode(token)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--per-episode", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    best = {"outside": float("inf"), "trace": float("inf"), "episode": float("inf")}
    for _ in range(args.repeats):  # interleaved rounds: the machine's load falls on all three
        for name, measure in (
            ("outside", lambda: outside(args.calls)),
            ("trace", lambda: in_traces(args.calls, args.per_episode)),
            ("episode", lambda: in_episodes(args.calls, args.per_episode)),
        ):
            gc.collect()
            best[name] = min(best[name], measure())
    base = best["outside"]
    print(f"@monitor outside any trace or episode: {base / 1000:.2f} us per call (1x)")
    print(f"inside a proveai trace (recording + close): {best['trace'] / 1000:.2f} us "
          f"({best['trace'] / base:.1f}x)")
    print(f"inside a sweep episode (recording + row JSON): {best['episode'] / 1000:.2f} us "
          f"({best['episode'] / base:.1f}x)")
    print(f"episode / trace: {best['episode'] / best['trace']:.2f} (goal <= 1)")


if __name__ == "__main__":
    main()
