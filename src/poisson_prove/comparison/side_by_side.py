"""One pair of episode twins side by side: the view model `inspect --pair` and the dashboard draw.

Pure: two episodes' stored spans in (their JSON text or the decoded list), a `PairView` out.
`pair_view_of(label, key, replicate, before, after, names=...)` matches the two twins' agent
calls by agent and occurrence (poisson_prove.comparison.attribution), in the before twin's call
order then the calls only the after twin made, one `PairLine` each, the first divergence
marked; a pair whose seeds differ is no pair (a ProveError saying how to pair the runs).
Reading the twins from the store is poisson_prove.comparison.twins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from poisson_prove.comparison.attribution import AgentCall, agent_calls, first_divergence
from poisson_prove.errors import ProveError
from poisson_prove.store.agent_calls import span_entries


@dataclass(frozen=True)
class PairLine:
    """One line of the side-by-side view: an agent call in both twins (or in one)."""

    agent: str
    occurrence: int
    depth: int
    before: AgentCall | None
    after: AgentCall | None
    same: bool  # output hash and status equal in both twins
    first: bool  # the first divergence


@dataclass(frozen=True)
class PairView:
    """Two twins' agent calls side by side, in call order, the first divergence marked."""

    condition: str  # the condition's label
    key: str
    replicate: int
    seed: int | None
    before_outcome: str | None
    after_outcome: str | None
    lines: tuple[PairLine, ...]
    first_divergence: str | None


def pair_view_of(
    label: str, key: str, replicate: int,
    before: tuple[Any, int | None, str | None], after: tuple[Any, int | None, str | None],
    *, names: tuple[str, str],
) -> PairView:
    """The view of two episodes given as (spans, seed, outcome); a ProveError unless they are
    twins (the same seed)."""
    (spans_b, seed_b, outcome_b), (spans_a, seed_a, outcome_a) = before, after
    if seed_b != seed_a:
        raise ProveError(
            f'runs "{names[0]}" and "{names[1]}" gave this episode different seeds ({seed_b} and '
            f"{seed_a}): they are not twins (the runs were not paired at sweep time)",
            suggestions=[f'poisson-prove sweep SPEC --yes --pair-with "{names[0]}"'],
        )
    calls_b, calls_a = agent_calls(span_entries(spans_b)), agent_calls(span_entries(spans_a))
    first = first_divergence(calls_b, calls_a)
    return PairView(
        condition=label, key=key, replicate=replicate, seed=seed_a, before_outcome=outcome_b,
        after_outcome=outcome_a, lines=tuple(side_by_side(calls_b, calls_a, first)),
        first_divergence=first,
    )


def side_by_side(
    before: Sequence[AgentCall], after: Sequence[AgentCall], first: str | None
) -> list[PairLine]:
    """The calls of both twins matched by agent and occurrence, in the before twin's call order
    then the after twin's calls it lacks; the first divergence (`first_divergence`) marked."""
    call_b = {c.key: c for c in before}
    call_a = {c.key: c for c in after}
    order = [c.key for c in before] + [c.key for c in after if c.key not in call_b]
    base = min((c.depth for c in [*before, *after]), default=0)
    lines, marked = [], False
    for key in order:
        b, a = call_b.get(key), call_a.get(key)
        same = b is not None and a is not None and b.output_hash == a.output_hash and b.status == a.status
        is_first = not same and not marked and first == key[0]
        marked = marked or is_first
        shown = b if b is not None else a
        assert shown is not None  # every key comes from one side or the other
        lines.append(PairLine(key[0], key[1], shown.depth - base, b, a, same, is_first))
    return lines
