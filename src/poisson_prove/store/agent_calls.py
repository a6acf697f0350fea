"""The `agent_calls` column: each episode's proveai `@monitor` calls as typed rows, beside `spans`.

`diff` names the agent where episode twins first diverge (poisson_prove.comparison.attribution)
from each call's agent, output hash, status, code / prompt / model hashes and check labels.
Those few fields are kept here, per episode, as a typed Arrow list of structs (`AGENT_CALL`,
null for an episode without agent calls), derived from the episode's `spans` text when its
batch's table is built (store.table). Typed columns rather than a compact text: Parquet stores
each field of the struct as a column of its own, so a reader takes the fields it wants as Arrow
arrays (offsets and one string buffer per field) with no parse and no Python object per call,
and DuckDB, polars and pyarrow.dataset read the same column natively; the spans text it
replaces for the attribution must be decompressed and parsed whole (about 2.4 kB an episode
of the pipeline example against under 1 kB here, most of it the output hashes).

`agent_calls_of(texts)` is the one derivation, used by the writer and by the attribution's
reading of a run stored before the column existed (poisson-prove.episodes/1): Arrow's JSON
reader parses the texts holding a monitor span together, keeping only these fields; when it
refuses a row (a damaged row, a label that is not text) every row is read by itself
(`calls_of_entries`), as the attribution always read them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

#: The attribute keys read: the agent's name, what it gave, and what it is.
AGENT_NAME = "gen_ai.agent.name"
OUTPUT_HASH = "proveai.output_hash"
#: The struct field of each hash (the attribution's code / prompt / model) -> its attribute key.
HASH_FIELDS = {"code_hash": "proveai.code_hash", "prompt_hash": "proveai.prompt_hash",
               "model_hash": "proveai.model_hash"}
#: A check's label is the attribute `proveai.check.<name>`: good, bad or skip.
CHECK_PREFIX = "proveai.check."
#: A monitor span in a spans text, compact as stored or spaced.
MONITOR_MARK = r'"source"\s*:\s*"monitor"'
_MONITOR = re.compile(MONITOR_MARK)
#: How far up a parent link is followed to the enclosing agent call (a damaged row's loop ends).
MAX_DEPTH = 64

#: One agent call's fields: name -> (DuckDB type, meaning).
AGENT_CALL_FIELDS: dict[str, tuple[str, str]] = {
    "agent": ("VARCHAR", "the agent's name (gen_ai.agent.name, else the span's name)"),
    "parent": ("INTEGER", "the index in this list of the agent call it ran inside; null at the top"),
    "status": ("VARCHAR", "ok or error"),
    "output_hash": ("VARCHAR", "proveai.output_hash: the hash of what it returned"),
    "code_hash": ("VARCHAR", "proveai.code_hash"),
    "prompt_hash": ("VARCHAR", "proveai.prompt_hash"),
    "model_hash": ("VARCHAR", "proveai.model_hash"),
    "checks": ('STRUCT("name" VARCHAR, "label" VARCHAR)[]', "the proveai checks' labels on it, by name"),
}

_TYPE: list[Any] = []


def arrow_scalar(value: str | int | bool) -> Any:
    """An Arrow scalar built over its buffers: pa.scalar (and a Python value handed to a
    pyarrow.compute function, which it converts so) imports pandas, most of a second."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are read or written
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    if isinstance(value, bool):
        return arrow_array(np.array([value]), pa.bool_())[0]
    if isinstance(value, int):
        return arrow_array(np.array([value], dtype=np.int64), pa.int64())[0]
    data = value.encode("utf-8")
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int32))
    return pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(data)], null_count=0)[0]


def numpy_of(array: Any, fill: int = 0) -> Any:
    """A boolean or integer Arrow array as NumPy, each null as `fill`, read from its buffers:
    Array.to_numpy imports pandas (see `arrow_scalar`)."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are read or written
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    count, start = len(array), array.offset
    validity, data = array.buffers()[:2]

    def bits(buffer: Any) -> Any:
        unpacked = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
        return unpacked[start : start + count].astype(np.bool_)

    if data is None or count == 0:
        return np.full(count, fill, dtype=np.bool_ if pa.types.is_boolean(array.type) else np.int64)
    if pa.types.is_boolean(array.type):
        values = bits(data)
    else:
        values = np.frombuffer(data, dtype=array.type.to_pandas_dtype(), count=start + count)[start:]
    if array.null_count == 0 or validity is None:
        return values
    return np.where(bits(validity), values, fill).astype(values.dtype)


def true_where(mask: Any) -> Any:
    """A boolean Arrow array with each null as False."""
    import pyarrow.compute as pc  # pyarrow: ~160 ms, only when episodes are read or written

    return pc.fill_null(mask, arrow_scalar(False))


def arrow_array(values: Any, kind: Any, valid: Any = None) -> Any:
    """A NumPy array of numbers or booleans as an Arrow array of `kind` over its buffer (null
    where `valid` is False), never through pa.array (see `arrow_scalar`)."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are read or written
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    count = len(values)
    if pa.types.is_boolean(kind):
        data = pa.py_buffer(np.packbits(np.asarray(values, dtype=np.bool_), bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(values, dtype=kind.to_pandas_dtype()))
    if valid is None:
        return pa.Array.from_buffers(kind, count, [None, data], null_count=0)
    bitmap = pa.py_buffer(np.packbits(np.asarray(valid, dtype=np.bool_), bitorder="little"))
    return pa.Array.from_buffers(kind, count, [bitmap, data], null_count=count - int(np.count_nonzero(valid)))


def agent_calls_type() -> pa.DataType:
    """The column's Arrow type: list<struct<AGENT_CALL_FIELDS>>."""
    if not _TYPE:
        import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

        check = pa.struct([("name", pa.string()), ("label", pa.string())])
        fields = [pa.field(name, pa.string()) for name in AGENT_CALL_FIELDS]
        fields[1] = pa.field("parent", pa.int32())
        fields[-1] = pa.field("checks", pa.list_(check))
        _TYPE.append(pa.list_(pa.struct(fields)))
    return _TYPE[0]


def monitor_entries(
    entries: Sequence[Any],
) -> Iterator[tuple[int, Mapping[str, Any], str, Mapping[str, Any]]]:
    """The `@monitor` calls of a decoded spans list, in stored order (an agent call is stored
    when it opens): (index in the list, the entry, the agent's name, its attributes). The one
    reading of an agent call from spans: this column's derivation and the attribution's calls
    (comparison.attribution.agent_calls) both walk it."""
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or entry.get("source") != "monitor":
            continue
        attributes = entry.get("attributes")
        attributes = attributes if isinstance(attributes, Mapping) else {}
        name = attributes.get(AGENT_NAME, entry.get("name"))
        if isinstance(name, str):
            yield index, entry, name, attributes


def check_labels(attributes: Mapping[str, Any]) -> dict[str, str]:
    """An agent call's check labels by check name (its `proveai.check.<name>` attributes)."""
    return {k[len(CHECK_PREFIX):]: str(v) for k, v in attributes.items() if k.startswith(CHECK_PREFIX)}


def calls_of_entries(entries: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """One episode's agent calls from its decoded spans list, in stored order (an agent call is
    stored when it opens); None when it has none."""
    listed = list(entries or ())
    call_at: dict[int, int] = {}
    calls: list[dict[str, Any]] = []
    for index, entry, name, attributes in monitor_entries(listed):
        output = attributes.get(OUTPUT_HASH)
        call: dict[str, Any] = {"agent": name, "parent": None,
                                "status": "error" if entry.get("status") == "error" else "ok",
                                "output_hash": output if isinstance(output, str) else None}
        for field, key in HASH_FIELDS.items():
            value = attributes.get(key)
            call[field] = value if isinstance(value, str) else None
        labels = check_labels(attributes)
        call["checks"] = [{"name": k, "label": labels[k]} for k in sorted(labels)]
        call_at[index] = len(calls)
        call["parent"] = index  # resolved below, once every call's place is known
        calls.append(call)
    for call in calls:
        call["parent"] = _enclosing(listed, call["parent"], call_at)
    return calls or None


def _enclosing(entries: Sequence[Any], index: int, call_at: Mapping[int, int]) -> int | None:
    seen = {index}
    entry = entries[index]
    for _ in range(MAX_DEPTH):
        parent = entry.get("parent") if isinstance(entry, Mapping) else None
        if not isinstance(parent, int) or isinstance(parent, bool) or not 0 <= parent < len(entries):
            return None
        if parent in seen:  # a damaged row's loop
            return None
        if parent in call_at:
            return call_at[parent]
        seen.add(parent)
        entry = entries[parent]
    return None


def span_entries(spans: str | Sequence[Any] | None) -> list[Mapping[str, Any]]:
    """The objects of a stored `spans` value (its JSON text or the parsed list); [] for anything
    that is not a list of them (a damaged or foreign value is read as no spans). The one reader
    of a stored spans value: the column's derivation, the inspection and the twins use it."""
    if spans is None:
        return []
    if isinstance(spans, str):
        try:
            spans = json.loads(spans)
        except ValueError:
            return []
    if not isinstance(spans, Sequence) or isinstance(spans, str):
        return []
    return [entry for entry in spans if isinstance(entry, Mapping)]


def agent_calls_of(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The `agent_calls` value of each `spans` text (null for a row without agent calls)."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are read or written
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written
    import pyarrow.compute as pc  # as above

    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks() if texts.num_chunks else pa.nulls(0, pa.string())
    kind = agent_calls_type()
    count = len(texts)
    if texts.null_count == count:  # no spans at all (most sweeps' batches): no regex pass
        return pa.nulls(count, kind)
    marked = true_where(pc.match_substring_regex(texts, MONITOR_MARK))
    rows = np.flatnonzero(numpy_of(marked))
    if rows.size == 0:
        return pa.nulls(count, kind)
    parsed = _parsed(pa, pc, texts if rows.size == count else texts.take(arrow_array(rows, pa.int64())))
    if parsed is None:  # a row the reader refuses: every row by itself
        values = [
            calls_of_entries(span_entries(t)) if _MONITOR.search(t or "") else None for t in texts.to_pylist()
        ]
        return pa.array(values, type=kind)
    counts, calls = parsed
    every = np.zeros(count, dtype=np.int64)
    every[rows] = counts
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(every, out=offsets[1:])
    return pa.ListArray.from_arrays(
        arrow_array(offsets, pa.int32()), calls, type=kind, mask=arrow_array(every == 0, pa.bool_())
    )


def _parsed(pa: Any, pc: Any, texts: Any) -> tuple[Any, Any] | None:
    """(calls per row, the calls as one struct array) of texts that each hold a monitor span,
    by Arrow's JSON reader; None when it refuses one."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are read or written
    import pyarrow.json as pj  # pyarrow: ~160 ms, only when episodes are read or written

    names = check_names(texts)
    fields = (AGENT_NAME, OUTPUT_HASH, *HASH_FIELDS.values(), *(CHECK_PREFIX + n for n in names))
    attributes = pa.struct([(name, pa.string()) for name in fields])
    entry = pa.struct([("name", pa.string()), ("source", pa.string()), ("status", pa.string()),
                       ("parent", pa.int64()), ("attributes", attributes)])
    schema = pa.schema([("s", pa.list_(entry))])
    lines = pc.binary_join_element_wise(arrow_scalar('{"s":'), texts, arrow_scalar("}\n"), arrow_scalar(""))
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset : lines.offset + len(lines) + 1]
    data = lines.buffers()[2][int(offsets[0]) : int(offsets[-1])]  # the lines, back to back
    try:
        table = pj.read_json(
            pa.BufferReader(data),
            parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if table.num_rows != len(texts):
        return None
    spans = table.column("s").combine_chunks()
    if spans.null_count:  # a row whose text is JSON null, or not a list
        return None
    flat = spans.flatten()
    attrs = flat.field("attributes")
    agent = pc.coalesce(attrs.field(AGENT_NAME), flat.field("name"))
    keep = pc.and_(true_where(pc.equal(flat.field("source"), arrow_scalar("monitor"))), pc.is_valid(agent))
    kept = numpy_of(keep)
    starts = numpy_of(spans.offsets).astype(np.int64)
    row_of = np.repeat(np.arange(len(spans)), np.diff(starts))
    counts = np.bincount(row_of[kept], minlength=len(spans))
    parent = _parents(flat.field("parent"), kept, row_of, starts, counts)
    error = true_where(pc.equal(flat.field("status"), arrow_scalar("error")))
    status = pc.if_else(error, arrow_scalar("error"), arrow_scalar("ok"))
    columns = {
        "agent": agent, "parent": parent, "status": status, "output_hash": attrs.field(OUTPUT_HASH),
        **{field: attrs.field(key) for field, key in HASH_FIELDS.items()},
    }
    arrays = [values if name == "parent" else values.filter(keep) for name, values in columns.items()]
    labels = [attrs.field(CHECK_PREFIX + n).filter(keep) for n in names]
    checks = _checks(pa, pc, labels, names, int(kept.sum()))
    kind = agent_calls_type().value_type
    calls = pa.StructArray.from_arrays([*arrays, checks], fields=list(kind))
    return counts, calls


def _parents(parent: Any, kept: Any, row_of: Any, starts: Any, counts: Any) -> Any:
    """Per kept call, the index (among its row's calls) of the nearest enclosing kept call
    (NumPy arrays over the flat entries: kept, row of each, each row's first entry)."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are read or written
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    local = numpy_of(parent, -1).astype(np.int64)
    width = np.diff(starts)[row_of]
    own = np.arange(local.size) - starts[row_of]
    valid = (local >= 0) & (local < width) & (local != own)
    up = np.where(valid, starts[row_of] + local, -1)  # each entry's parent, as a flat index
    found = np.full(local.size, -1, dtype=np.int64)
    at = up.copy()
    for _ in range(MAX_DEPTH):
        open_ = (found < 0) & (at >= 0)
        if not open_.any():
            break
        hit = open_.copy()
        hit[open_] = kept[at[open_]]
        found[hit] = at[hit]
        step = open_ & ~hit
        at[step] = up[at[step]]
        at[~step] = -1
    call_no = np.cumsum(kept) - 1  # each kept entry's place among all kept calls
    first = np.concatenate([[0], np.cumsum(counts)])[row_of]
    mine = found[kept]
    index = np.where(mine >= 0, call_no[np.maximum(mine, 0)] - first[kept], 0).astype(np.int32)
    return arrow_array(index, pa.int32(), valid=mine >= 0)


def _checks(pa: Any, pc: Any, labels: list[Any], names: list[str], calls: int) -> Any:
    """The checks field: per call, its labelled checks as (name, label), by name."""
    import numpy as np  # numpy: loaded by pyarrow itself, only when episodes are read or written

    kind = agent_calls_type().value_type.field("checks").type
    if not names or calls == 0:
        empty = arrow_array(np.zeros(calls + 1, dtype=np.int32), pa.int32())
        return pa.ListArray.from_arrays(empty, pa.nulls(0, kind.value_type), type=kind)
    valid = np.stack([numpy_of(label.is_valid()) for label in labels], axis=1)
    call, name = np.nonzero(valid)  # row-major: by call, then by name (names are sorted)
    all_labels = pa.concat_arrays([label.cast(pa.string()) for label in labels])
    values = pa.StructArray.from_arrays(
        [_texts(pa, np, names).take(arrow_array(name, pa.int64())),
         all_labels.take(arrow_array(name * calls + call, pa.int64()))],
        fields=list(kind.value_type),
    )
    offsets = np.zeros(calls + 1, dtype=np.int32)
    np.cumsum(valid.sum(axis=1), out=offsets[1:])
    return pa.ListArray.from_arrays(arrow_array(offsets, pa.int32()), values, type=kind)


def _texts(pa: Any, np: Any, values: list[str]) -> Any:
    """A few texts as an Arrow string array over their bytes (no pa.array: `arrow_scalar`)."""
    encoded = [value.encode("utf-8") for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers, null_count=0)


def check_names(texts: Any) -> list[str]:
    """The check names labelled anywhere in `texts` (`"proveai.check.<name>":`)."""
    import pyarrow.compute as pc  # pyarrow: ~160 ms, only when episodes are read or written

    marker = '"' + CHECK_PREFIX
    marked = texts.filter(true_where(pc.match_substring(texts, marker)))
    if len(marked) == 0:
        return []
    pieces = pc.list_flatten(pc.split_pattern(marked, marker))
    found = pc.extract_regex(pieces, r'^(?P<name>(?:[^"\\]|\\.)*)":')
    names = set()
    for raw in pc.unique(pc.struct_field(found.drop_null(), "name")).to_pylist():
        try:
            names.add(json.loads(f'"{raw}"'))  # the key as JSON wrote it, escapes and all
        except ValueError:
            continue
    return sorted(n for n in names if n)
