"""Which agent moved the rate: the first agent whose output differs between episode twins.

Pure: parsed agent calls in, result objects out (poisson_prove.inspection.pairs reads the
store and calls these). For a row that moved (one condition, or pooled group, and one outcome),
the twins are split into those whose outcome flipped (the event in one run and not in the
other) and those that did not. In each pair the agent calls are matched by agent and
occurrence (the second `draft` call with the second) and walked in call order; the first whose
output hash or status differs is where the twins diverge (`first_divergence`). Counted per
agent among the flipped pairs and, beside it, among the unflipped ones: the noise floor, agents
that diverge anyway because the model samples (`attribute_row`).

An agent is named when it is the first divergence in most flipped pairs and either diverges
more often there than among the unflipped pairs or was itself changed between the runs (its
code, prompt or model hash differs). Otherwise the row says why no agent is named.

Each agent's check failure rate (the share of pairs whose calls of that agent carry the label
`bad` for a check) is compared paired: McNemar on the pairs, or the sign-flip test over cases
(STATISTICS.md section 7) when the cases are pooled; Benjamini-Hochberg over every agent check
of the comparison, a family of its own (`compare_checks`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poisson_prove.stats.clustered import sign_flip
from poisson_prove.stats.tests import benjamini_hochberg, mcnemar_many
from poisson_prove.store.agent_calls import OUTPUT_HASH, check_labels, monitor_entries

#: The hashes a changed agent differs in (a proveai snapshot pins the same ones).
CHANGE_HASHES = {"code": "proveai.code_hash", "prompt": "proveai.prompt_hash", "model": "proveai.model_hash"}


@dataclass(frozen=True)
class AgentCall:
    """One `@monitor` call of an episode, as the attribution compares it."""

    agent: str
    occurrence: int  # 0 for the agent's first call in the episode, 1 for its second, ...
    output_hash: str | None
    status: str
    hashes: Mapping[str, str | None] = field(default_factory=dict)  # code / prompt / model
    checks: Mapping[str, str] = field(default_factory=dict)  # check name -> good / bad / skip
    depth: int = 0  # how deep in the episode's tree (steps and agent calls it ran inside)
    error: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.agent, self.occurrence)


def agent_calls(entries: Sequence[Any] | None) -> tuple[AgentCall, ...]:
    """The `@monitor` calls of one episode's decoded `spans` list, in call order (the order they
    were stored: an agent call is stored when it opens)."""
    calls: list[AgentCall] = []
    seen: Counter[str] = Counter()
    listed = list(entries or ())
    for index, entry, name, attributes in monitor_entries(listed):
        output = attributes.get(OUTPUT_HASH)
        calls.append(
            AgentCall(
                agent=name,
                occurrence=seen[name],
                output_hash=output if isinstance(output, str) else None,
                status="error" if entry.get("status") == "error" else "ok",
                hashes={
                    what: (value if isinstance(value := attributes.get(key), str) else None)
                    for what, key in CHANGE_HASHES.items()
                },
                checks=check_labels(attributes),
                depth=_depth(listed, index),
                error=None if entry.get("error") is None else str(entry.get("error")),
            )
        )
        seen[name] += 1
    return tuple(calls)


def _depth(entries: Sequence[Any], index: int) -> int:
    depth, seen = 0, {index}
    parent = entries[index].get("parent")
    while isinstance(parent, int) and 0 <= parent < len(entries) and parent not in seen:
        seen.add(parent)  # a damaged row's loop ends the walk
        depth += 1
        above = entries[parent]
        parent = above.get("parent") if isinstance(above, Mapping) else None
    return depth


def first_divergence(before: Sequence[AgentCall], after: Sequence[AgentCall]) -> str | None:
    """The agent of the first call (in the before twin's call order, then the after twin's for
    calls only it made) whose output or status differs from its twin's, or that has no twin;
    None when every call matches."""
    after_by_key = {call.key: call for call in after}
    before_keys = set()
    for call in before:
        before_keys.add(call.key)
        twin = after_by_key.get(call.key)
        if twin is None or twin.output_hash != call.output_hash or twin.status != call.status:
            return call.agent
    for call in after:
        if call.key not in before_keys:
            return call.agent
    return None


def first_divergence_of(
    before: Sequence[tuple[str, str | None, str]], after: Sequence[tuple[str, str | None, str]]
) -> str | None:
    """`first_divergence` of two episodes given as their calls' (agent, output hash, status),
    in call order: the same answer without an AgentCall per call."""
    def keyed(calls: Sequence[tuple[str, str | None, str]]) -> list[tuple[tuple[str, int], tuple[Any, ...]]]:
        seen: Counter[str] = Counter()
        out = []
        for call in calls:
            out.append(((call[0], seen[call[0]]), call))
            seen[call[0]] += 1
        return out

    after_keyed = keyed(after)
    after_by_key = dict(after_keyed)
    before_keys = set()
    for key, call in keyed(before):
        before_keys.add(key)
        twin = after_by_key.get(key)
        if twin is None or twin[1] != call[1] or twin[2] != call[2]:
            return call[0]
    for key, call in after_keyed:
        if key not in before_keys:
            return call[0]
    return None


@dataclass(frozen=True)
class AgentCount:
    """How often an agent was the first divergence among the flipped and the unflipped pairs
    read, and which of its hashes differ between the runs."""

    agent: str
    flipped: int
    unflipped: int
    changed: tuple[str, ...]  # "code", "prompt", "model": what differs between the two runs


@dataclass(frozen=True)
class CheckComparison:
    """One agent check's failure rate before and after, compared paired."""

    agent: str
    check: str
    test: str  # mcnemar | sign_flip
    pairs: int  # pairs whose calls of the agent carry the check's label in both runs
    before: float  # share of those pairs labelled bad before
    after: float
    b: int  # bad before only
    c: int  # bad after only
    p: float  # mid-p
    q_value: float | None = None  # Benjamini-Hochberg over every agent check compared


@dataclass(frozen=True)
class RowAttribution:
    """The attribution of one row that moved: one condition (or pooled group) and one outcome."""

    key: str
    label: str
    outcome: str
    verdict: str  # rose | fell
    flipped_pairs: int  # twins whose outcome flipped, all of them
    unflipped_pairs: int
    flipped_read: int  # of which read (every one up to the cap, else an even sample)
    unflipped_read: int
    agents: tuple[AgentCount, ...]  # most often first divergent among flipped pairs first
    named: str | None  # the agent where the flipped twins first diverge, or None
    reason: str | None  # why no agent is named
    checks: tuple[CheckComparison, ...] = ()

    @property
    def sampled(self) -> bool:
        return self.flipped_read < self.flipped_pairs or self.unflipped_read < self.unflipped_pairs


@dataclass(frozen=True)
class Attribution:
    """The attribution of a comparison: one entry per row that moved, or why there is none."""

    available: bool
    reason: str | None  # why nothing is attributed, in words
    rows: tuple[RowAttribution, ...] = ()
    check_tests: int = 0  # the checks' Benjamini-Hochberg family size
    # why nothing is attributed, as a code: nothing_moved | no_agent_spans | unpaired | episode_timeout
    code: str | None = None

    @property
    def said(self) -> bool:
        """Whether the report says anything: rows attributed, or runs with agent spans that
        cannot be (a comparison of runs without agents, or where nothing moved, says nothing)."""
        return self.available or self.code not in (None, "nothing_moved", "no_agent_spans")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def changed_between(before: Sequence[Sequence[AgentCall]], after: Sequence[Sequence[AgentCall]]) -> dict[
    str, tuple[str, ...]
]:
    """Per agent, which of its code / prompt / model hashes differ between the two runs' calls
    read (the sets of values seen: an agent whose prompt changed shows it in every twin)."""
    seen: dict[str, dict[str, tuple[set[Any], set[Any]]]] = {}
    for side, episodes in enumerate((before, after)):
        for calls in episodes:
            for call in calls:
                per = seen.setdefault(call.agent, {what: (set(), set()) for what in CHANGE_HASHES})
                for what, value in call.hashes.items():
                    per[what][side].add(value)
    return {
        agent: tuple(what for what, (b, a) in per.items() if b and a and b != a)
        for agent, per in seen.items()
    }


def attribute_row(
    *,
    key: str,
    label: str,
    outcome: str,
    verdict: str,
    flipped: Sequence[tuple[Sequence[AgentCall], Sequence[AgentCall]]],
    unflipped: Sequence[tuple[Sequence[AgentCall], Sequence[AgentCall]]],
    flipped_pairs: int,
    unflipped_pairs: int,
    changed: Mapping[str, tuple[str, ...]],
) -> RowAttribution:
    """Count the first divergences among the flipped and unflipped pairs read, and name the
    agent (see the module docstring) or say why none is named."""
    return attribute_firsts(
        key=key, label=label, outcome=outcome, verdict=verdict,
        flipped=[first_divergence(b, x) for b, x in flipped],
        unflipped=[first_divergence(b, x) for b, x in unflipped],
        flipped_pairs=flipped_pairs, unflipped_pairs=unflipped_pairs, changed=changed,
    )


def attribute_firsts(
    *,
    key: str,
    label: str,
    outcome: str,
    verdict: str,
    flipped: Sequence[str | None],
    unflipped: Sequence[str | None],
    flipped_pairs: int,
    unflipped_pairs: int,
    changed: Mapping[str, tuple[str, ...]],
) -> RowAttribution:
    """`attribute_row` given each pair's first divergence (None: the twins agree throughout)."""
    first_flipped = Counter(a for a in flipped if a is not None)
    first_unflipped = Counter(a for a in unflipped if a is not None)
    agents = sorted(
        set(first_flipped) | set(first_unflipped),
        key=lambda a: (-first_flipped[a], first_unflipped[a], a),
    )
    counts = tuple(
        AgentCount(a, first_flipped[a], first_unflipped[a], tuple(changed.get(a, ()))) for a in agents
    )
    named, reason = _name(counts, len(flipped), len(unflipped))
    return RowAttribution(
        key=key, label=label, outcome=outcome, verdict=verdict, flipped_pairs=flipped_pairs,
        unflipped_pairs=unflipped_pairs, flipped_read=len(flipped), unflipped_read=len(unflipped),
        agents=counts, named=named, reason=reason,
    )


def _name(counts: Sequence[AgentCount], flipped: int, unflipped: int) -> tuple[str | None, str | None]:
    if flipped == 0:
        return None, "no pair of twins flipped (the rows moved only among episodes without a twin)"
    if not counts or counts[0].flipped == 0:
        return None, (
            "no agent's output differs between the flipped twins: the change is outside the "
            "monitored agents (or in what they are given)"
        )
    top = counts[0]
    if 2 * top.flipped <= flipped:
        return None, (
            f"no agent is the first divergence in most flipped pairs (the most often, {top.agent}, "
            f"in {top.flipped} of {flipped})"
        )
    share_flipped = top.flipped / flipped
    share_unflipped = top.unflipped / unflipped if unflipped else 0.0
    if share_unflipped >= share_flipped and not top.changed:
        return None, (
            f"{top.agent}'s output differs in {top.unflipped} of {unflipped} twins that did not flip "
            "as well, with its code, prompt and model unchanged: the model samples (no response cache "
            "keyed by the episode seed, no model seed), so the first divergence names no agent"
        )
    return top.agent, None


def compare_checks(
    labels: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]],
    *,
    case: np.ndarray | None = None,
) -> list[CheckComparison]:
    """Each (agent, check)'s failure rate, paired. `labels` maps it to two arrays over the pairs
    read, before and after: 1 labelled bad, 0 labelled good, -1 without a label (skip, or the
    agent not called); `case`, when cases are pooled, each pair's case number (the sign-flip
    test over cases). q-values are left for `adjust_checks`."""
    out = []
    for (agent, check), (before, after) in labels.items():
        both = (before >= 0) & (after >= 0)
        pairs = int(both.sum())
        if pairs == 0:
            continue
        bad_b, bad_a = before[both] == 1, after[both] == 1
        b_pairs, c_pairs = bad_b & ~bad_a, bad_a & ~bad_b
        if case is None:
            p_mid, _ = mcnemar_many(np.array([int(b_pairs.sum())]), np.array([int(c_pairs.sum())]))
            p, test = float(p_mid[0]), "mcnemar"
        else:
            cases = case[both]
            width = int(cases.max()) + 1
            per_b = np.bincount(cases[b_pairs], minlength=width)
            per_c = np.bincount(cases[c_pairs], minlength=width)
            p, test = sign_flip(per_b, per_c).p_mid, "sign_flip"
        out.append(
            CheckComparison(
                agent=agent, check=check, test=test, pairs=pairs, before=float(bad_b.mean()),
                after=float(bad_a.mean()), b=int(b_pairs.sum()), c=int(c_pairs.sum()), p=p,
            )
        )
    return out


def adjust_checks(rows: Sequence[RowAttribution]) -> tuple[tuple[RowAttribution, ...], int]:
    """The rows with every check's q-value: Benjamini-Hochberg over all of them, one family in
    which a condition's (agent, check) counts once however many of its outcomes moved."""
    tests: dict[tuple[str, str, str], float] = {}
    for row in rows:
        for check in row.checks:
            tests.setdefault((row.key, check.agent, check.check), check.p)
    if not tests:
        return tuple(rows), 0
    q = dict(zip(tests, benjamini_hochberg(np.array(list(tests.values()))).tolist(), strict=True))
    adjusted = tuple(
        dataclasses.replace(
            row,
            checks=tuple(
                dataclasses.replace(check, q_value=q[(row.key, check.agent, check.check)])
                for check in row.checks
            ),
        )
        for row in rows
    )
    return adjusted, len(tests)
