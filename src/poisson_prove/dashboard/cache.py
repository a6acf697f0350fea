"""The dashboard's drawing cache: what a run or a comparison yields, kept in the store and reused.

A refresh after a sweep reads every run, but a run that did not change gives the same view,
the same SVG and the same section of the page as last time, and a comparison of two unchanged
runs the same `Comparison`, forest plot and "where" section. Those are kept as JSON documents
in `<store>/.dashboard-cache/` (hidden: no listing of runs sees it), one file per run
(`run-<id>.json`) and per comparison (`cmp-<sha256>.json`), each written with the one atomic
write (a reader sees the old entry or the new one, never half of one) and holding the full key
it was drawn for:

- the cache's own format and the code that drew it (a SHA-256 over the dashboard's, the
  comparison's, the statistics', the store's and the design's source files, the templates and
  the script: the plots are drawn by dashboard/plots.py itself), so a change of code or drawing
  draws again;
- the run (its id, a SHA-256 of its manifest's bytes, each batch file's name, size and mtime):
  a resumed run, an edited manifest or a batch rewritten is drawn again;
- the drawing options (plotted or not, and the partner run's own signature for the episode
  table's "flipped"; for a comparison, the method, event and q asked for).

An entry is used only when its stored key equals the key asked for, field by field; one that
cannot be read, is not JSON, holds another key (another run's, an older code's) or does not
decode into the view's own types is ignored and drawn again (and overwritten). Nothing in an
entry is executed: the documents are plain JSON decoded into the dashboard's dataclasses by
their declared types; the SVG and HTML texts go into the page as they are (as drawn, every
value escaped when it was), where the page's Content-Security-Policy keeps any script from
running. Deleting the folder is always safe: the next page draws everything.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from prove_common.files import clear_stale_temps, read_regular_text, write_text_atomic

CACHE_DIR = ".dashboard-cache"
FORMAT = 1  # the layout of an entry; a change makes every older entry a miss
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # an entry larger than this is not read (it is no entry of ours)
MAX_COMPARISONS = 64  # comparison entries kept (the pages --serve keeps for chosen pairs)
_SOURCES = ("dashboard", "comparison", "stats", "store", "design")

T = TypeVar("T")


class CacheMiss(Exception):
    """An entry that cannot be used: missing, damaged, foreign or of another key."""


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """A SHA-256 over the code that computes and draws what the cache keeps."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder in _SOURCES:
        for path in sorted((package / folder).rglob("*")):
            if path.suffix in (".py", ".j2", ".js") and path.is_file():
                digest.update(path.relative_to(package).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def encode(value: Any) -> Any:
    """A dataclass tree as JSON values: dataclasses as objects of their fields, tuples as lists,
    a mapping with tuple keys as a list of [key, value] pairs."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value):
            return {k: encode(v) for k, v in value.items()}
        return [[encode(k), encode(v)] for k, v in value.items()]
    return value


def decode(kind: Any, data: Any) -> Any:
    """`data` (from `encode`) as a value of the declared type `kind`; CacheMiss when it is not one."""
    try:
        return _decoder(kind)(data)
    except (TypeError, ValueError, KeyError) as exc:  # a list where pairs were, a wrong length
        raise CacheMiss(str(exc)) from None


Decoder = typing.Callable[[Any], Any]


def _scalar(kind: type) -> Decoder:
    def scalar(data: Any) -> Any:
        if type(data) is not kind:
            raise CacheMiss(f"not a {kind.__name__}")
        return data

    return scalar


def _float(data: Any) -> float:
    if type(data) is float:
        return data
    if type(data) is int:
        return float(data)
    raise CacheMiss("not a number")


def _none(data: Any) -> None:
    if data is not None:
        raise CacheMiss("not null")


def _any(data: Any) -> Any:
    return data


@functools.cache
def _decoder(kind: Any) -> Decoder:
    """A decoder for `kind`, built once per type (decoding is then one call per value)."""
    if kind is Any:
        return _any
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass_decoder(kind)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(args)
    if origin is tuple:
        return _tuple_decoder(args)
    if origin is list:
        item = _decoder(args[0])
        return lambda data: [item(v) for v in _list(data)]
    if origin is dict:
        key, value = _decoder(args[0]), _decoder(args[1])

        def mapping(data: Any) -> dict[Any, Any]:
            if isinstance(data, dict):
                return {key(k): value(v) for k, v in data.items()}
            return {key(k): value(v) for k, v in _list(data)}

        return mapping
    if kind is float:
        return _float
    if kind in (int, str, bool):
        return _scalar(kind)
    if kind is type(None):
        return _none
    raise CacheMiss(f"a type the cache does not keep: {kind}")


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise CacheMiss("not a list")
    return data


def _dataclass_decoder(kind: type) -> Decoder:
    fields: list[tuple[str, Decoder]] = []
    hints = typing.get_type_hints(kind)
    names = {f.name for f in dataclasses.fields(kind) if f.init}

    def dataclass_value(data: Any) -> Any:
        if not isinstance(data, dict) or data.keys() != names:
            raise CacheMiss(f"{kind.__name__}: not its fields")
        if not fields:  # built on first use: a dataclass may refer to itself
            fields.extend((name, _decoder(hints[name])) for name in sorted(names))
        return kind(**{name: decode_field(data[name]) for name, decode_field in fields})

    return dataclass_value


def _union_decoder(args: tuple[Any, ...]) -> Decoder:
    optional = type(None) in args
    options = [_decoder(a) for a in args if a is not type(None)]

    def union(data: Any) -> Any:
        if data is None and optional:
            return None
        for option in options:
            try:
                return option(data)
            except CacheMiss:
                continue
        raise CacheMiss("no member of the union fits")

    return union


def _tuple_decoder(args: tuple[Any, ...]) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])
        return lambda data: tuple([item(v) for v in _list(data)])
    items = [_decoder(a) for a in args]

    def fixed(data: Any) -> tuple[Any, ...]:
        if len(_list(data)) != len(items):
            raise CacheMiss("a tuple of another length")
        return tuple(decode_item(v) for decode_item, v in zip(items, data, strict=True))

    return fixed


class DrawingCache:
    """The entries of one store; `enabled=False` reads and writes nothing (every lookup a miss)."""

    def __init__(self, store_root: Path, *, enabled: bool = True) -> None:
        self.folder = store_root / CACHE_DIR
        self.enabled = enabled
        self.hits = 0
        self.misses = 0
        self._cleared = False

    def _path(self, name: str) -> Path:
        return self.folder / f"{name}.json"

    def get(self, name: str, key: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The entry's stored key and payload when the stored key holds every field of `key`
        with the same value (and this format and code); else CacheMiss."""
        if not self.enabled:
            raise CacheMiss("cache off")
        try:
            document = json.loads(read_regular_text(self._path(name), limit=MAX_ENTRY_BYTES))
        except (OSError, ValueError, RecursionError) as exc:  # missing, a device, torn, not JSON
            self.misses += 1
            raise CacheMiss(str(exc)) from None
        wanted = {"format": FORMAT, "code": code_version(), **key}
        stored = document.get("key") if isinstance(document, dict) else None
        payload = document.get("payload") if isinstance(document, dict) else None
        if not isinstance(stored, dict) or not isinstance(payload, dict):
            self.misses += 1
            raise CacheMiss("not an entry")
        if any(field not in stored or stored[field] != value for field, value in wanted.items()):
            self.misses += 1
            raise CacheMiss("another key")
        self.hits += 1
        return stored, payload

    def put(self, name: str, key: Mapping[str, Any], payload: Mapping[str, Any]) -> None:
        """Keep `payload` under `key` (atomically; a cache that cannot be written is only slower)."""
        if not self.enabled:
            return
        document = {"key": {"format": FORMAT, "code": code_version(), **key}, "payload": payload}
        try:
            self.folder.mkdir(exist_ok=True)
            if not self._cleared:
                clear_stale_temps(self.folder, every_writer=False)  # what a killed writer left
                self._cleared = True
            write_text_atomic(self._path(name), json.dumps(document, separators=(",", ":")), durable=False)
        except OSError:
            pass  # a read-only store, a full disk: the page is still drawn, only not kept

    def prune(self, runs: set[str], comparisons: set[str], *, limit: int = MAX_COMPARISONS) -> None:
        """Remove the entries of runs not in `runs` (deleted), and of comparisons beyond the
        `limit` most recently written that are not in `comparisons` (the ones just shown)."""
        if not self.enabled or not self.folder.is_dir():
            return
        others = []
        for path in self.folder.glob("*.json"):
            if path.stem.startswith("run-") and path.stem not in runs:
                _unlink(path)
            elif path.stem.startswith("cmp-") and path.stem not in comparisons:
                try:
                    others.append((path.stat().st_mtime_ns, path))
                except OSError:
                    continue
        others.sort(reverse=True)
        for _, path in others[max(0, limit - len(comparisons)) :]:
            _unlink(path)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass  # gone already, or a read-only store: only a stale entry left
