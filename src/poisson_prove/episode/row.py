"""An episode as a stored row: its fields, in the store's column order, and its JSON columns
as compact text: `meta` strictly (the user's own values: an object,
NaN or infinity makes the episode invalid) and `spans` leniently (captured by instrumentors,
not written by the user: a value JSON cannot hold keeps its repr)."""

from __future__ import annotations

import json
from typing import Any

#: The episode columns, in order.
EPISODE_COLUMNS = (
    "run_id",
    "cell",
    "cfg",
    "replicate",
    "seed",
    "outcome",
    "t",
    "horizon",
    "case_id",
    "meta",
    "error_kind",
    "error_message",
    "started_at",
    "duration_s",
    "spans",
)
#: The fields of a row tuple, in order: a row of the store without its constant run_id.
ROW_FIELDS = EPISODE_COLUMNS[1:]
#: Positions in a row tuple that the sweep reads while counting.
OUTCOME_AT = ROW_FIELDS.index("outcome")
ERROR_KIND_AT = ROW_FIELDS.index("error_kind")
ERROR_MESSAGE_AT = ROW_FIELDS.index("error_message")


def _not_json(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not a JSON value")


spans_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=repr).encode
_strict_dumps = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=_not_json, allow_nan=False
).encode
try:  # the C encoder called directly: a third of the cost of JSONEncoder.encode per small dict
    from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]
    from json.encoder import encode_basestring as _encode_basestring
except ImportError:  # pragma: no cover - CPython always has it
    _c_make_encoder = None

#: The C encoder can be called directly (run_into keeps one in hand for its hot loop).
C_ENCODER = _c_make_encoder is not None
#: The JSON text of each meta whose keys and values are all plain `str` (a case id, labels),
#: by its items in order: such a meta's text never changes, and a sweep's rollouts repeat a few
#: of them, so its row looks the text up instead of encoding it again. At most PLAIN_META_MAX
#: (then the encoder writes the others). Two such metas with equal items have equal texts.
PLAIN_META_TEXTS: dict[tuple[tuple[str, str], ...], str] = {}
PLAIN_META_MAX = 4096
#: The plain-text meta a condition's rollouts last repeated (a copy: the rollout may mutate its
#: own dict later), its text and its keys in order, by condition key: a condition repeats one
#: meta (its case id), and comparing a dict with it costs a third of building its items to
#: look the text up. Set only from a text found in PLAIN_META_TEXTS (a meta seen before), so a
#: rollout whose metas never repeat pays one lookup of its condition (one that alternates
#: between two pays a copy per episode). At most PLAIN_META_MAX.
REPEATED_META: dict[str, tuple[dict[str, str], str, list[str]]] = {}


def new_meta_encoder() -> Any:
    # (markers, default, encoder, indent, key sep, item sep, sort_keys, skipkeys, allow_nan)
    return _c_make_encoder({}, _not_json, _encode_basestring, None, ":", ",", False, False, False)


#: The one strict encoder in use (replaced after a failed encoding).
META_ENCODERS: list[Any] = []


def meta_json(meta: Any) -> str:
    """meta as strict compact JSON (raises ValueError for a circular structure, NaN or infinity,
    TypeError for a value JSON cannot hold)."""
    if _c_make_encoder is None:
        return _strict_dumps(meta)
    if not META_ENCODERS:
        META_ENCODERS.append(new_meta_encoder())
    try:
        return "".join(META_ENCODERS[0](meta, 0))
    except BaseException:
        # A failed encoding can leave entries in the encoder's circular-reference markers.
        META_ENCODERS[0] = new_meta_encoder()
        raise
