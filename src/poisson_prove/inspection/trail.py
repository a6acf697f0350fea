"""Where a failed episode went, read from its spans: one short line a report can show.

The spans column holds a JSON list of `{name, start, end, attributes, status, source, parent}`
(see traces and capture; chaos faults have `source: "chaos"`). `failure_trail(spans)` says,
in a line:

- the path of nested steps down to the first span whose status is `error`
  (`plan > search: ValueError: no hits`), or the last step when none erred (`… last answer`);
- the chaos faults injected before that point (`after chaos http_status_503 on call 2`).

It reads only names, error texts and chaos attributes, which [capture]'s rules already bound.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from poisson_prove.chaos.reach import is_reach
from poisson_prove.store.agent_calls import span_entries

MAX_ERROR_TEXT = 80


def _spans(spans: str | Sequence[Any] | None) -> list[Mapping[str, Any]]:
    # chaos's accounting entry (chaos.reach) is no step of the episode; it is the last entry, so
    # leaving it out moves no other entry's index (the parents stay right).
    return [s for s in span_entries(spans) if not is_reach(s)]


def _path(spans: list[Mapping[str, Any]], index: int) -> str:
    names = []
    seen: set[int] = set()
    current: Any = index
    while isinstance(current, int) and 0 <= current < len(spans) and current not in seen:
        seen.add(current)
        names.append(str(spans[current].get("name")))
        current = spans[current].get("parent")
    return " > ".join(reversed(names))


def failure_trail(spans: str | Sequence[Any] | None) -> str | None:
    """The line for one episode's spans (JSON text or list); None when it has no spans."""
    items = _spans(spans)
    if not items:
        return None
    erred = [i for i, s in enumerate(items) if s.get("status") == "error" and s.get("source") != "chaos"]
    parents = {items[i].get("parent") for i in erred}
    # The innermost erring step: a step's error also marks every step it propagated through.
    failed = next((i for i in erred if i not in parents), None)
    faulted = [i for i, s in enumerate(items) if s.get("source") == "chaos" and s.get("status") == "error"]
    if failed is None and faulted:
        failed = faulted[-1]
    if failed is None:
        own = [s for s in items if s.get("source") != "chaos"] or items
        text = f"no span erred; last {own[-1].get('name')}"
        until = float("inf")
    elif items[failed].get("source") == "chaos":
        attributes = items[failed].get("attributes") or {}
        text = f"{_path(items, failed)} on call {attributes.get('chaos.call')}"
        until = items[failed].get("start") or float("inf")
    else:
        error = str(items[failed].get("error") or "error")
        if len(error) > MAX_ERROR_TEXT:
            error = error[: MAX_ERROR_TEXT - 1] + "…"
        text = f"{_path(items, failed)}: {error}"
        until = items[failed].get("end") or items[failed].get("start") or float("inf")
    faults = [
        f"{s.get('attributes', {}).get('chaos.fault')} on call {s.get('attributes', {}).get('chaos.call')}"
        for i, s in enumerate(items)
        if i != failed
        and s.get("source") == "chaos"
        and s.get("status") == "error"
        and (s.get("start") or 0) <= until
    ]
    if faults:
        text += f" (after chaos {', '.join(faults[:3])}{', …' if len(faults) > 3 else ''})"
    return text


def common_trails(spans: Iterable[str | Sequence[Any] | None], top: int = 3) -> tuple[tuple[str, int], ...]:
    """The `top` most frequent trails among episodes, with how many episodes took each."""
    counts = Counter(t for t in (failure_trail(s) for s in spans) if t is not None)
    return tuple(counts.most_common(top))
