"""One run's agent calls column by column: what the attribution compares, per episode.

`side_calls_of(calls)` takes an Arrow array of the store's `agent_calls` values (one per
episode, store.agent_calls; a null row has no calls) and gives a `SideCalls`: the calls' agents
and hashes as NumPy codes, their check labels as small integers, and per episode one string of
its calls' (agent, output hash, status), equal in two twins exactly when no call diverges, so
a pair of twins whose calls all agree costs no Python object. poisson_prove.comparison.twins
reads the column from the store and compares the twins with these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from poisson_prove.comparison.attribution import CHANGE_HASHES, AgentCall
from poisson_prove.store.agent_calls import (
    HASH_FIELDS,
    agent_calls_type,
    arrow_array,
    arrow_scalar,
    numpy_of,
    true_where,
)

#: The struct field of each hash the attribution compares (code / prompt / model).
_HASH_OF = {
    what: field for field, key in HASH_FIELDS.items() for what, k in CHANGE_HASHES.items() if k == key
}


@dataclass
class SideCalls:
    """The `@monitor` calls of some episodes of one run, column by column (one entry per call,
    episode by episode in call order): what the attribution reads, as NumPy and Arrow arrays
    with no Python object per call. `trail(e)` is episode e's (agent, output hash, status)
    sequence joined in one string, equal in two twins exactly when no call diverges; `keys(e)`
    that sequence, for `first_divergence_of`, built only when some pair's trails differ."""

    offsets: np.ndarray  # episode e's calls are offsets[e]:offsets[e + 1]
    agents: list[str]  # the agents' names
    agent: np.ndarray  # per call, its agent's index in `agents`
    output: Any  # per call, its output hash (an Arrow string array)
    status: Any  # per call, ok | error (as above)
    hashes: dict[str, np.ndarray]  # code / prompt / model -> per call, its value's index in `values`
    values: list[str | None]  # the hashes' distinct values
    checks: dict[str, np.ndarray]  # check -> per call: -1 no label, 0 another (skip), 1 good, 2 bad
    trails: list[str]  # per episode: its calls' agent, output hash and status, joined

    def __post_init__(self) -> None:
        self._keys: list[tuple[str, str | None, str]] | None = None

    def trail(self, episode: int) -> str:
        return self.trails[episode]

    def keys(self, episode: int) -> list[tuple[str, str | None, str]]:
        """The episode's calls as (agent, output hash, status), in call order."""
        if self._keys is None:
            names = [self.agents[i] for i in self.agent.tolist()]
            self._keys = list(zip(names, self.output.to_pylist(), self.status.to_pylist(), strict=True))
        return self._keys[int(self.offsets[episode]) : int(self.offsets[episode + 1])]

    def calls(self, episode: int) -> tuple[AgentCall, ...]:
        """The episode's AgentCalls (agent, occurrence, output hash, status)."""
        seen: dict[str, int] = {}
        out = []
        for name, output, status in self.keys(episode):
            out.append(AgentCall(name, seen.get(name, 0), output, status))
            seen[name] = seen.get(name, 0) + 1
        return tuple(out)

    def changed_values(self) -> dict[str, dict[str, set[str | None]]]:
        """Per agent, per hash (code / prompt / model), the values its calls carry."""
        out: dict[str, dict[str, set[str | None]]] = {}
        width = len(self.values) + 1
        for what, codes in self.hashes.items():
            for pair in np.unique(self.agent * width + codes).tolist():
                agent, value = divmod(pair, width)
                per = out.setdefault(self.agents[agent], {w: set() for w in self.hashes})
                per[what].add(self.values[value])
        return out

    def labelled(self) -> set[tuple[str, str]]:
        """The (agent, check) pairs some call carries a label of."""
        return {
            (self.agents[a], check)
            for check, codes in self.checks.items()
            for a in np.unique(self.agent[codes >= 0]).tolist()
        }

    def labels(self, agent: str, check: str) -> np.ndarray:
        """Per episode: 1 when a call of `agent` is labelled bad by `check`, else 0 when one is
        labelled good, else -1 (skip, no label, or the agent not called)."""
        episodes = len(self.offsets) - 1
        codes = self.checks.get(check)
        out = np.zeros(episodes, dtype=np.int8)
        if codes is None or agent not in self.agents or not episodes:
            return out - 1
        mine = self.agent == self.agents.index(agent)
        rank = np.where(mine & (codes > 0), codes, 0).astype(np.int8)
        episode_of = np.repeat(np.arange(episodes), np.diff(self.offsets))
        np.maximum.at(out, episode_of, rank)
        return out - 1  # 2 bad -> 1, 1 good -> 0, 0 none -> -1


def _codes(values: Any) -> tuple[np.ndarray, list[Any]]:
    """An Arrow array as (per value its index in the distinct values, the distinct values)."""
    import pyarrow.compute as pc  # pyarrow: ~160 ms, only when a run is read

    encoded = pc.dictionary_encode(values, null_encoding="encode")
    return numpy_of(encoded.indices).astype(np.int64), encoded.dictionary.to_pylist()


def side_calls_of(calls: Any) -> SideCalls:
    """The agent calls of each episode of an Arrow `agent_calls` array (a null row: none)."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read
    import pyarrow.compute as pc  # as above

    if isinstance(calls, pa.ChunkedArray):
        calls = calls.combine_chunks() if calls.num_chunks else pa.nulls(0, agent_calls_type())
    counts = _lengths(pc, calls)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    flat = pc.list_flatten(calls)
    agent, agents = _codes(flat.field("agent"))
    output, status = flat.field("output_hash"), flat.field("status")
    hashes = pa.concat_arrays([flat.field(_HASH_OF[what]) for what in CHANGE_HASHES])
    hash_codes, values = _codes(hashes)
    per = len(flat)
    by_what = {what: hash_codes[n * per : (n + 1) * per] for n, what in enumerate(CHANGE_HASHES)}
    checks = flat.field("checks")
    labels = pc.list_flatten(checks)
    labelled = _lengths(pc, checks)
    call_of = np.repeat(np.arange(per), labelled)
    name, names = _codes(labels.field("name"))
    label = labels.field("label")
    def labelled_as(word: str) -> np.ndarray:
        return numpy_of(true_where(pc.equal(label, arrow_scalar(word))))

    rank = np.where(labelled_as("bad"), 2, np.where(labelled_as("good"), 1, 0))
    by_check = {}
    for n, check in enumerate(names):
        if check is None:
            continue
        codes = np.full(per, -1, dtype=np.int8)
        here = name == n
        codes[call_of[here]] = rank[here]
        by_check[check] = codes
    return SideCalls(
        offsets=offsets, agents=[str(a) for a in agents], agent=agent, output=output, status=status,
        hashes=by_what, values=values, checks=by_check,
        trails=_trails(offsets, flat.field("agent"), output, status),
    )


def _trails(offsets: np.ndarray, agent: Any, output: Any, status: Any) -> list[str]:
    """Per episode one string of its calls' agent, output hash (\\x00 for none) and status."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read
    import pyarrow.compute as pc  # as above

    calls = pc.binary_join_element_wise(
        agent, pc.coalesce(output, arrow_scalar("\x00")), status, arrow_scalar("\x1f")
    )
    episodes = pa.ListArray.from_arrays(arrow_array(offsets, pa.int32()), calls)
    return pc.binary_join(episodes, arrow_scalar("\x1e")).to_pylist()


def _lengths(pc: Any, lists: Any) -> np.ndarray:
    """Each list's length, 0 for a null one (as pc.list_flatten, which leaves a null out)."""
    lengths = np.diff(numpy_of(lists.offsets)).astype(np.int64)
    if lists.null_count:
        lengths[~numpy_of(lists.is_valid())] = 0
    return lengths
