"""One run's agent calls column by column: what the attribution compares, per episode.

`side_calls_of(calls, rows)` takes an Arrow array of the store's `agent_calls` values (one per
episode, store.agent_calls; a null row has no calls), or a part of them as read from a row
group, and gives a `SideCalls` of the episodes at `rows`: each call's agent, output hash,
status and code / prompt / model hashes as NumPy codes of one `Vocabulary` (the two runs
compared share one, so a code means the same text on both sides), its check labels as small
integers. It reads the Arrow buffers with NumPy (list offsets, dictionary indices, string
offsets): no pyarrow.compute (its import alone is a tenth of a second or more), no Python object
per call but the distinct texts. `first_divergences` compares many pairs of twins at once
(poisson_prove.comparison.attribution's `first_divergence_of`, the same answer): twins whose
calls are the same agents in the same order cost NumPy only. poisson_prove.comparison.twins
reads the column from the store and compares the twins with these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poisson_prove.comparison.attribution import CHANGE_HASHES, AgentCall
from poisson_prove.store.agent_calls import HASH_FIELDS

#: The struct field of each hash the attribution compares (code / prompt / model).
_HASH_OF = {
    what: name for name, key in HASH_FIELDS.items() for what, k in CHANGE_HASHES.items() if k == key
}
#: The fields of an agent call the attribution reads (its `parent` is not).
READ_FIELDS = ("agent", "status", "output_hash", *HASH_FIELDS, "checks")
#: Check labels as ranked per call: 2 bad, 1 good, 0 another (skip); -1 where none.
_RANKS = {"bad": 2, "good": 1}


class Vocabulary:
    """Texts as integer codes, shared by the sides compared (-1: no text)."""

    def __init__(self) -> None:
        self.code: dict[str, int] = {}
        self.texts: list[str] = []

    def codes(self, texts: Sequence[str | None]) -> np.ndarray:
        out = np.empty(len(texts), dtype=np.int64)
        for n, text in enumerate(texts):
            if text is None:
                out[n] = -1
                continue
            found = self.code.get(text)
            if found is None:
                found = self.code[text] = len(self.texts)
                self.texts.append(text)
            out[n] = found
        return out

    def text(self, code: int) -> str | None:
        return None if code < 0 else self.texts[code]


@dataclass
class SideCalls:
    """The `@monitor` calls of some episodes of one run, column by column (one entry per call,
    episode by episode in call order), as codes of `vocabulary`: what the attribution reads,
    with no Python object per call. `keys(e)` is episode e's (agent, output hash, status)
    sequence, for `first_divergence_of`, built only for the pairs NumPy does not settle."""

    offsets: np.ndarray  # episode e's calls are offsets[e]:offsets[e + 1]
    agent: np.ndarray  # per call, its agent's code
    output: np.ndarray  # per call, its output hash's code (-1: none)
    status: np.ndarray  # per call, ok | error (as a code)
    hashes: dict[str, np.ndarray]  # code / prompt / model -> per call, its value's code
    checks: dict[str, np.ndarray]  # check -> per call: -1 no label, 0 another (skip), 1 good, 2 bad
    vocabulary: Vocabulary = field(default_factory=Vocabulary)

    @property
    def episodes(self) -> int:
        return len(self.offsets) - 1

    def keys(self, episode: int) -> list[tuple[str, str | None, str]]:
        """The episode's calls as (agent, output hash, status), in call order."""
        text = self.vocabulary.text
        span = range(int(self.offsets[episode]), int(self.offsets[episode + 1]))
        # a status is always written (ok | error); a null one would read as None
        return [
            (str(text(int(self.agent[i]))), text(int(self.output[i])), text(int(self.status[i])))  # type: ignore[misc]
            for i in span
        ]

    def trail(self, episode: int) -> str:
        """The episode's (agent, output hash, status) sequence joined in one string: equal in two
        twins exactly when no call diverges."""
        return "\x1e".join(
            "\x1f".join((agent, "\x00" if output is None else output, str(status)))
            for agent, output, status in self.keys(episode)
        )

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
        text = self.vocabulary.text
        width = len(self.vocabulary.texts) + 1
        for what, codes in self.hashes.items():
            for pair in np.unique((self.agent + 1) * width + codes + 1).tolist():
                agent, value = divmod(pair, width)
                per = out.setdefault(str(text(agent - 1)), {w: set() for w in self.hashes})
                per[what].add(text(value - 1))
        return out

    def labelled(self) -> set[tuple[str, str]]:
        """The (agent, check) pairs some call carries a label of."""
        text = self.vocabulary.text
        return {
            (str(text(a)), check)
            for check, codes in self.checks.items()
            for a in np.unique(self.agent[codes >= 0]).tolist()
        }

    def labels(self, agent: str, check: str) -> np.ndarray:
        """Per episode: 1 when a call of `agent` is labelled bad by `check`, else 0 when one is
        labelled good, else -1 (skip, no label, or the agent not called)."""
        episodes = self.episodes
        codes = self.checks.get(check)
        out = np.zeros(episodes, dtype=np.int8)
        code = self.vocabulary.code.get(agent)
        if codes is None or code is None or not episodes:
            return out - 1
        rank = np.where((self.agent == code) & (codes > 0), codes, 0).astype(np.int8)
        episode_of = np.repeat(np.arange(episodes), np.diff(self.offsets))
        np.maximum.at(out, episode_of, rank)
        return out - 1  # 2 bad -> 1, 1 good -> 0, 0 none -> -1


def first_divergences(
    before: SideCalls, at_b: np.ndarray, after: SideCalls, at_a: np.ndarray
) -> list[str | None]:
    """Per pair (episode at_b[i] of `before`, at_a[i] of `after`, the two sides sharing one
    vocabulary), `first_divergence_of` their calls, every pair at once: each call is keyed by
    its pair, agent and occurrence (the second `draft` call of the episode with the second);
    the first call of the before twin (in call order) without a twin of that key or whose
    output hash or status differs from its twin's names its agent, else the first call of the
    after twin without a twin, else None (every call matches)."""
    at_b, at_a = np.asarray(at_b, dtype=np.int64), np.asarray(at_a, dtype=np.int64)
    pairs = at_b.size
    calls_b, pair_b = _calls_of(before, at_b)
    calls_a, pair_a = _calls_of(after, at_a)
    agent_b, agent_a = before.agent[calls_b] + 1, after.agent[calls_a] + 1  # 0: no agent
    width = int(max(agent_b.max(initial=0), agent_a.max(initial=0))) + 1
    deep = max(calls_b.size, calls_a.size) + 1
    key_b = (pair_b * width + agent_b) * deep + _occurrences(pair_b * width + agent_b)
    key_a = (pair_a * width + agent_a) * deep + _occurrences(pair_a * width + agent_a)
    order = np.argsort(key_a, kind="stable")
    found_at = np.minimum(np.searchsorted(key_a[order], key_b), max(key_a.size - 1, 0))
    twin = order[found_at] if key_a.size else np.zeros(key_b.size, dtype=np.int64)
    found = (key_a[twin] == key_b) if key_a.size else np.zeros(key_b.size, dtype=np.bool_)
    differs = ~found
    differs[found] = (before.output[calls_b[found]] != after.output[calls_a[twin[found]]]) | (
        before.status[calls_b[found]] != after.status[calls_a[twin[found]]]
    )
    agent_at = np.full(pairs, -1, dtype=np.int64)  # per pair, the code of the agent named + 1
    named = np.zeros(pairs, dtype=np.bool_)
    for side_differs, side_pair, side_agent in (
        (differs, pair_b, agent_b),
        (~np.isin(key_a, key_b), pair_a, agent_a),  # calls only the after twin made
    ):
        hit = np.flatnonzero(side_differs & ~named[side_pair])
        first_pair, first_at = np.unique(side_pair[hit], return_index=True)
        agent_at[first_pair] = side_agent[hit[first_at]]
        named[first_pair] = True
    text = before.vocabulary.text
    out: list[str | None] = [None] * pairs
    for n in np.flatnonzero(named).tolist():
        out[n] = str(text(int(agent_at[n]) - 1))
    return out


def _calls_of(side: SideCalls, episodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the calls of `episodes` one episode after another in call order, each one's place in
    `episodes`)."""
    starts = side.offsets[episodes]
    counts = side.offsets[episodes + 1] - starts
    return _spread(starts, counts), np.repeat(np.arange(episodes.size), counts)


def _occurrences(group: np.ndarray) -> np.ndarray:
    """Per entry, how many entries of the same group come before it."""
    order = np.argsort(group, kind="stable")
    ordered = group[order]
    place = np.arange(group.size)
    if not group.size:
        return place
    first = np.maximum.accumulate(np.where(np.r_[True, ordered[1:] != ordered[:-1]], place, 0))
    out = np.empty(group.size, dtype=np.int64)
    out[order] = place - first
    return out


def side_calls_of(calls: Any, rows: Any = None, vocabulary: Vocabulary | None = None) -> SideCalls:
    """The agent calls of the episodes `rows` (positions in `calls`, ascending; default all) of an Arrow
    `agent_calls` array, or chunked array (a null row: none), as codes of `vocabulary` (a new
    one by default). The fields read may be any of READ_FIELDS (a missing one reads as none);
    their texts as strings or as dictionaries."""
    vocabulary = vocabulary or Vocabulary()
    chunks = list(calls.chunks) if hasattr(calls, "chunks") else [calls]
    total = sum(len(chunk) for chunk in chunks)
    wanted = np.arange(total, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    parts: list[SideCalls] = []
    start = 0
    for chunk in chunks:
        here = wanted[(wanted >= start) & (wanted < start + len(chunk))] - start
        if here.size or not parts:
            parts.append(_part(chunk, here, vocabulary))
        start += len(chunk)
    return joined(parts, vocabulary)


def joined(parts: Sequence[SideCalls], vocabulary: Vocabulary) -> SideCalls:
    """Side calls read in parts (of one vocabulary), one after the other."""
    if not parts:
        return _empty(vocabulary)
    if len(parts) == 1:
        return parts[0]
    counts = np.concatenate([np.diff(part.offsets) for part in parts])
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    calls = [part.agent.size for part in parts]
    names = sorted({check for part in parts for check in part.checks})
    return SideCalls(
        offsets=offsets,
        agent=np.concatenate([part.agent for part in parts]),
        output=np.concatenate([part.output for part in parts]),
        status=np.concatenate([part.status for part in parts]),
        hashes={what: np.concatenate([part.hashes[what] for part in parts]) for what in CHANGE_HASHES},
        checks={
            check: np.concatenate(
                [part.checks.get(check, np.full(n, -1, dtype=np.int8))
                 for part, n in zip(parts, calls, strict=True)]
            )
            for check in names
        },
        vocabulary=vocabulary,
    )


def _empty(vocabulary: Vocabulary) -> SideCalls:
    none = np.zeros(0, dtype=np.int64)
    return SideCalls(np.zeros(1, dtype=np.int64), none, none, none, dict.fromkeys(CHANGE_HASHES, none), {},
                     vocabulary)


def _part(lists: Any, here: np.ndarray, vocabulary: Vocabulary) -> SideCalls:
    """The calls of rows `here` of one Arrow list<struct> array."""
    starts, counts = _ranges(lists, here)
    offsets = np.zeros(here.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    at = _spread(starts, counts)
    struct = lists.values
    names = {struct.type.field(i).name for i in range(struct.type.num_fields)}

    def texts(name: str) -> np.ndarray:
        if name not in names:
            return np.full(at.size, -1, dtype=np.int64)
        return _text_codes(struct.field(name), at, vocabulary)

    checks: dict[str, np.ndarray] = {}
    if "checks" in names and at.size:
        labels = struct.field("checks")
        label_starts, label_counts = _ranges(labels, at)
        label_at = _spread(label_starts, label_counts)
        call_of = np.repeat(np.arange(at.size), label_counts)
        items = labels.values
        name = _text_codes(items.field("name"), label_at, vocabulary)
        label = _text_codes(items.field("label"), label_at, vocabulary)
        rank = np.zeros(label.size, dtype=np.int8)
        for word, value in _RANKS.items():
            code = vocabulary.code.get(word)
            if code is not None:
                rank[label == code] = value
        for code in np.unique(name[name >= 0]).tolist():
            per = np.full(at.size, -1, dtype=np.int8)
            mine = name == code
            per[call_of[mine]] = rank[mine]
            checks[str(vocabulary.text(code))] = per
    return SideCalls(
        offsets=offsets, agent=texts("agent"), output=texts("output_hash"), status=texts("status"),
        hashes={what: texts(_HASH_OF[what]) for what in CHANGE_HASHES}, checks=checks, vocabulary=vocabulary,
    )


def _valid(array: Any, at: np.ndarray) -> np.ndarray:
    """Whether each of positions `at` of an Arrow array is not null, from its validity bitmap."""
    bitmap = array.buffers()[0]
    if array.null_count == 0 or bitmap is None:
        return np.ones(at.size, dtype=np.bool_)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset + at].astype(np.bool_)


def _offsets(array: Any) -> np.ndarray:
    """The offsets of an Arrow list or string array (32 or 64 bit), from its buffer."""
    large = "large" in str(array.type)
    values = np.frombuffer(array.buffers()[1], dtype=np.int64 if large else np.int32)
    return values[array.offset : array.offset + len(array) + 1].astype(np.int64)


def _ranges(lists: Any, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each list's first value in `lists.values`, its length; 0 for a null list) at `at`."""
    if not at.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    offsets = _offsets(lists)
    starts = offsets[at]
    return starts, np.where(_valid(lists, at), offsets[at + 1] - starts, 0)


def _spread(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions starts[i]:starts[i] + counts[i], one range after the other."""
    total = int(counts.sum())
    return np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total, dtype=np.int64)


def _text_codes(array: Any, at: np.ndarray, vocabulary: Vocabulary) -> np.ndarray:
    """The codes of the texts at `at` of an Arrow string or dictionary array (-1: null)."""
    if not at.size:
        return np.zeros(0, dtype=np.int64)
    if hasattr(array, "dictionary"):
        indices = array.indices
        index = np.frombuffer(indices.buffers()[1], dtype=indices.type.to_pandas_dtype())
        index = index[indices.offset + at].astype(np.int64)
        index[~_valid(indices, at)] = -1
        used, where = np.unique(index, return_inverse=True)
        present = used[used >= 0]
        codes = vocabulary.codes(_strings(array.dictionary, present))
        table = np.concatenate([[-1], codes]) if used.size and used[0] < 0 else codes
        return table[where.reshape(-1)]
    return vocabulary.codes(_strings(array, at))


def _strings(array: Any, at: np.ndarray) -> list[str | None]:
    """The texts at `at` of an Arrow string array, from its buffers (None: null)."""
    valid = _valid(array, at).tolist()
    if array.buffers()[2] is None:  # no text but empty ones
        return ["" if ok else None for ok in valid]
    offsets = _offsets(array)
    data = memoryview(array.buffers()[2])
    begin, end = offsets[at].tolist(), offsets[at + 1].tolist()
    return [
        str(data[b:e], "utf-8") if ok else None for b, e, ok in zip(begin, end, valid, strict=True)
    ]
