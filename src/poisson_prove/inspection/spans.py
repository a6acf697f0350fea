"""An episode's spans read back as typed objects, in call order, with their parent links.

    from poisson_prove.inspection.run import find_episode
    from poisson_prove.inspection.spans import episode_spans

    detail = find_episode("latest", "ticket=refund/0")
    for span in episode_spans(detail.spans):
        print("  " * span.depth, span.name, span.source, span.agent, span.status)

`episode_spans(spans)` takes the `spans` column of one row (its JSON text, or the list
`find_episode` decodes) and returns one `EpisodeSpan` per entry, sorted by start (the order the
calls were made; a tie keeps the stored order), each with `index` (its place in that order),
`parent` (the index of its parent there, or None) and `depth`. A run made before spans carried
ids is read too: the episode's `trace_id` is the one its spans share (else one derived from
`key`, e.g. the run id, condition and replicate), and a span without a `span_id` gets one
derived from the trace id and its stored position, so the same row always reads the same.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from poisson_prove.store.agent_calls import span_entries


@dataclass(frozen=True)
class EpisodeSpan:
    """One recorded span: a step, an instrumentor span (`otel`), an agent call (`monitor`), an
    injected fault (`chaos`) or Prove's own accounting (`prove`)."""

    index: int
    name: str
    source: str
    start: float | None  # epoch seconds
    end: float | None
    status: str  # ok | error
    error: str | None
    parent: int | None  # index of the parent span in call order
    depth: int
    span_id: str  # 16 hex digits
    trace_id: str  # 32 hex digits: the episode's
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def duration_s(self) -> float | None:
        return None if self.start is None or self.end is None else self.end - self.start

    @property
    def agent(self) -> str | None:
        """The agent's name, for a `@monitor` call."""
        name = self.attributes.get("gen_ai.agent.name") if self.source == "monitor" else None
        return name if isinstance(name, str) else None

    @property
    def checks(self) -> dict[str, str]:
        """The labels of the proveai checks on this agent call: check name -> good/bad/skip."""
        prefix = "proveai.check."
        return {k[len(prefix):]: str(v) for k, v in self.attributes.items() if k.startswith(prefix)}


def _hex(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]


def _is_hex(value: Any, digits: int) -> bool:
    return isinstance(value, str) and len(value) == digits and all(c in "0123456789abcdef" for c in value)


def episode_trace_id(spans: str | Sequence[Any] | None, key: str = "") -> str:
    """The episode's trace id: the one most of its own spans carry (steps, agent calls), else
    any span's, else 32 hex digits derived from `key`."""
    entries = span_entries(spans)
    carried = [e for e in entries if _is_hex(e.get("trace_id"), 32)]
    own = Counter(e["trace_id"] for e in carried if e.get("source") != "otel")
    if not own:
        own = Counter(e["trace_id"] for e in carried)
    if own:
        return own.most_common(1)[0][0]
    return _hex(f"poisson-prove episode {key}", 32)


def episode_spans(spans: str | Sequence[Any] | None, key: str = "") -> list[EpisodeSpan]:
    """The spans of one episode in call order, with parent links (see the module docstring)."""
    entries = span_entries(spans)
    trace_id = episode_trace_id(entries, key)
    order = sorted(
        range(len(entries)),
        key=lambda i: (_number(entries[i].get("start"), float("inf")), i),
    )
    position = {stored: n for n, stored in enumerate(order)}
    parents: list[int | None] = []
    for stored in order:
        parent = entries[stored].get("parent")
        parents.append(position.get(parent) if isinstance(parent, int) and parent != stored else None)
    depths = [_depth(n, parents) for n in range(len(order))]
    out = []
    for n, stored in enumerate(order):
        entry = entries[stored]
        span_id = entry.get("span_id")
        attributes = entry.get("attributes")
        error = entry.get("error")
        out.append(
            EpisodeSpan(
                index=n,
                name=str(entry.get("name", "")),
                source=str(entry.get("source", "step")),
                start=_number(entry.get("start"), None),
                end=_number(entry.get("end"), None),
                status="error" if entry.get("status") == "error" else "ok",
                error=None if error is None else str(error),
                parent=parents[n],
                depth=depths[n],
                span_id=str(span_id) if _is_hex(span_id, 16) else _hex(f"{trace_id}:{stored}", 16),
                trace_id=trace_id,
                attributes=dict(attributes) if isinstance(attributes, Mapping) else {},
            )
        )
    return out


def _number(value: Any, default: Any) -> Any:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _depth(n: int, parents: list[int | None]) -> int:
    depth, seen = 0, {n}
    parent = parents[n]
    while parent is not None and parent not in seen:  # a damaged row's loop ends the walk
        seen.add(parent)
        depth += 1
        parent = parents[parent]
    return depth
