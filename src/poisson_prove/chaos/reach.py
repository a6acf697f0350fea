"""What [chaos] reached: per episode, the calls it could fault and the calls it did; per run,
the totals (the manifest's `chaos.reach`, the done line, `inspect RUN`).

An episode of a run with faults ends its spans with one entry of Prove's own accounting:

    {"name": "chaos reach", "source": "prove", "status": "ok", "parent": null, "start", "end",
     "attributes": {"chaos.calls": 5, "chaos.faulted": 2,
                    "chaos.clients": {"httpx": 5}, "chaos.hits": {"throttled": 2}}}

`chaos.calls` counts the calls made through a client chaos can fault (whether or not a fault's
hosts and paths matched them), `chaos.faulted` those a fault hit (a latency counts),
`chaos.clients` the calls per client and `chaos.hits` the calls each fault hit. It is a span, not
a key of `meta`: an episode that the rollout's exception ended has no meta, and those are the
episodes a fault ends most often. Its source is `prove`, not `chaos`, so the entries with source
`chaos` stay one per injected fault.

A run whose episodes reached no call is said so ("[chaos] reached no call ..."), and its
manifest's `injected` is false: `injected` says what happened, not what the spec declared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

REACH_NAME = "chaos reach"
REACH_SOURCE = "prove"
# The clients whose calls chaos faults, as the done line and `inspect` name them.
FAULTABLE = ("httpx", "httpx2", "requests", "aiohttp")
NO_CALL = (
    "[chaos] reached no call (the rollout's HTTP client is not one chaos can fault: it faults "
    "httpx, httpx2, requests and aiohttp calls made in the episode itself, not urllib, urllib3 "
    "or raw sockets, nor calls from threads the rollout starts)"
)
_HEAD = '{"name":"chaos reach"'
_DECODER = json.JSONDecoder()


def reach_entry(
    calls: int, faulted: int, clients: Mapping[str, int], hits: Mapping[str, int], start: float, end: float
) -> dict[str, Any]:
    """The episode's accounting entry (its spans' last)."""
    return {
        "name": REACH_NAME,
        "start": start,
        "end": end,
        "attributes": {
            "chaos.calls": calls,
            "chaos.faulted": faulted,
            "chaos.clients": dict(clients),
            "chaos.hits": dict(hits),
        },
        "status": "ok",
        "source": REACH_SOURCE,
        "parent": None,
    }


def is_reach(span: Any) -> bool:
    return isinstance(span, dict) and span.get("source") == REACH_SOURCE and span.get("name") == REACH_NAME


def episode_reach(spans: str | None) -> dict[str, Any] | None:
    """The attributes of an episode's accounting entry, read from its spans column (None
    without one: a run without faults, or an episode stopped before it ended)."""
    if not spans or REACH_NAME not in spans:
        return None
    at = spans.rfind(_HEAD)  # the entry is the last one, written compactly: decode only it
    if at >= 0:
        try:
            entry, _ = _DECODER.raw_decode(spans, at)
        except ValueError:
            entry = None
        if is_reach(entry):
            return dict(entry.get("attributes") or {})
    try:
        items = json.loads(spans)
    except ValueError:
        return None
    found = [s for s in items if is_reach(s)] if isinstance(items, list) else []
    return dict(found[-1].get("attributes") or {}) if found else None


def _faults_recorded(spans: str | None) -> dict[str, Any] | None:
    """For an episode without an accounting entry (stopped by --episode-timeout, or stored by
    an older version): what its fault entries show, the calls they hit."""
    if not spans or '"chaos"' not in spans:
        return None
    try:
        items = json.loads(spans)
    except ValueError:
        return None
    calls: set[Any] = set()
    hits: dict[str, int] = {}
    for span in items if isinstance(items, list) else []:
        if isinstance(span, dict) and span.get("source") == "chaos":
            attributes = span.get("attributes") or {}
            calls.add(attributes.get("chaos.call"))
            name = str(attributes.get("chaos.fault"))
            hits[name] = hits.get(name, 0) + 1
    if not calls:
        return None
    return {"chaos.calls": len(calls), "chaos.faulted": len(calls), "chaos.hits": hits}


def _add(total: dict[str, int], part: Any) -> None:
    if isinstance(part, Mapping):
        for name, count in part.items():
            if isinstance(count, int):
                total[str(name)] = total.get(str(name), 0) + count


def reach_totals(spans_column: Iterable[str | None]) -> dict[str, Any]:
    """The run's totals from its episodes' spans: episodes counted (those with an accounting
    entry), calls through a client chaos can fault, calls faulted, calls per client and per fault.
    An episode without an entry adds the calls its fault entries show were hit (so a fault that
    was injected is never totalled as none), and is not counted among the episodes."""
    episodes = calls = faulted = 0
    clients: dict[str, int] = {}
    hits: dict[str, int] = {}
    for spans in spans_column:
        reach = episode_reach(spans)
        if reach is None:
            reach = _faults_recorded(spans)
            if reach is None:
                continue
        else:
            episodes += 1
        calls += int(reach.get("chaos.calls") or 0)
        faulted += int(reach.get("chaos.faulted") or 0)
        _add(clients, reach.get("chaos.clients"))
        _add(hits, reach.get("chaos.hits"))
    return {"episodes": episodes, "calls": calls, "faulted": faulted, "clients": clients, "hits": hits}


def chaos_after_run(block: Mapping[str, Any], reach: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's `chaos` block once the run's episodes are stored: `injected` (the run's
    and each fault's) says whether a call was faulted, each fault has its `hits`, and `reach`
    holds the totals. `{}` for a run without faults."""
    if not block.get("faults"):
        return {}
    hits = reach.get("hits") or {}
    faults = []
    for fault in block["faults"]:
        count = int(hits.get(fault.get("name"), 0))
        faults.append({**fault, "injected": count > 0, "hits": count})
    return {**block, "faults": faults, "injected": bool(reach.get("faulted")), "reach": dict(reach)}


def reached_no_call(block: Mapping[str, Any] | None) -> bool:
    """Episodes were counted and not one of their calls went through a client chaos can fault."""
    reach = (block or {}).get("reach") or {}
    return bool((block or {}).get("faults")) and bool(reach.get("episodes")) and not reach.get("calls")


def reach_line(block: Mapping[str, Any] | None) -> str | None:
    """The line after the done line: only when the faults reached no call."""
    return NO_CALL if reached_no_call(block) else None


def reach_text(block: Mapping[str, Any] | None) -> str | None:
    """What `inspect RUN` says of a run with faults: `chaos faulted 9 of 100 calls in 20 episodes
    (httpx 100; throttled 9)`, or the no-call line; None when nothing was counted."""
    if not block or not block.get("faults"):
        return None
    if reached_no_call(block):
        return NO_CALL
    reach = block.get("reach") or {}
    if not reach.get("episodes"):
        return None
    clients = ", ".join(f"{name} {count:,}" for name, count in (reach.get("clients") or {}).items())
    hits = ", ".join(f"{name} {count:,}" for name, count in (reach.get("hits") or {}).items())
    detail = "; ".join(part for part in (clients, hits) if part)
    return (
        f"chaos faulted {reach.get('faulted', 0):,} of {reach.get('calls', 0):,} calls in "
        f"{reach['episodes']:,} episodes" + (f" ({detail})" if detail else "")
    )
