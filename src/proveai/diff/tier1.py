"""Tier 1 of the diff stack: text_diff (JSON / numeric / text) and the per-kind structural checks.

Volatile tokens (ids, timestamps) are masked before numbers are compared, so an id that
merely changed value is never read as a factual swap. The rules, applied in this order:

1. UUIDs (8-4-4-4-12 hex)                                   -> <uuid>
2. ISO-8601 dates and timestamps (2026-01-31, 2026-01-31T12:00:00.5Z, ...) -> <ts>
3. Request-style ids: a known prefix (req, request, chatcmpl, msg, run, call, resp, trace,
   span, evt, txn, id) + '_' or '-' + 6 or more [A-Za-z0-9_-]   -> <id>
4. Hex ids: 8+ hex characters with at least one letter a-f and one digit, or 0x + hex -> <hex>
5. Epoch timestamps in milliseconds: 13-digit integers 1000000000000..2999999999999 -> <epoch>

Numbers left after masking are compared as a multiset of (unit, value): "$1,200" is
("$", 1200.0); separators and trailing zeros do not matter ("1,200.00" == "1200").
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections import Counter
from typing import Any

from prove_common.text import value_as_text
from proveai.diff.verdict import Grade, Status, Tier
from proveai.providers.embedding import cosine_similarity

VOLATILE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("<uuid>", re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")),
    (
        "<ts>",
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        ),
    ),
    (
        "<id>",
        re.compile(r"\b(?:req|request|chatcmpl|msg|run|call|resp|trace|span|evt|txn|id)[_-][A-Za-z0-9_-]{6,}\b"),
    ),
    (
        "<hex>",
        re.compile(r"\b(?:0x[0-9a-fA-F]+|(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,})\b"),
    ),
    ("<epoch>", re.compile(r"\b[12]\d{12}\b")),
)
# A sign counts only when it does not follow a word character ("gpt-4o" holds 4, not -4).
NUMBER = re.compile(
    r"(?P<cur>[$€£¥])?\s?(?P<num>(?:(?<![\w.])[-+])?(?:\d[\d,]*(?:\.\d+)?|\.\d+))(?P<unit>\s?%)?"
)
JSON_START = ("{", "[")


def mask_volatile(text: str) -> str:
    """`text` with ids and timestamps replaced by placeholders (see the module docstring)."""
    for placeholder, pattern in VOLATILE_PATTERNS:
        text = pattern.sub(placeholder, text)
    return text


def numbers_of(text: str) -> Counter[tuple[str, float]]:
    """The multiset of (unit, value) numbers in `text` after masking volatile tokens."""
    found: Counter[tuple[str, float]] = Counter()
    for match in NUMBER.finditer(mask_volatile(text)):
        raw = match.group("num").replace(",", "")
        try:
            value = float(raw)
        except ValueError:
            continue
        if math.isfinite(value):
            unit = (match.group("cur") or "") + ("%" if match.group("unit") else "")
            found[(unit, value)] += 1
    return found


def normalise_whitespace(text: str) -> str:
    return " ".join(text.split())


def parse_json_container(value: Any) -> tuple[bool, Any]:
    """(True, parsed) when `value` is (or is a string holding) a JSON object or array."""
    if isinstance(value, dict | list):
        return True, value
    if isinstance(value, str) and value.lstrip().startswith(JSON_START):
        try:
            parsed = json.loads(value)
        except ValueError:
            return False, None
        if isinstance(parsed, dict | list):
            return True, parsed
    return False, None


def unified(old_text: str, new_text: str) -> str:
    lines = difflib.unified_diff(
        old_text.splitlines(), new_text.splitlines(), fromfile="old", tofile="new", lineterm=""
    )
    return "\n".join(lines)


def text_diff(old: Any, new: Any) -> dict[str, Any]:
    """Compare two outputs: {"equal", "kind": "text|json|numeric", "unified", "volatile_only"}.

    - Both JSON objects/arrays (or strings holding them): deep equality, key order ignored;
      the diff is of sorted-key, indented JSON. kind "json".
    - Otherwise, as text: if the numbers differ (after masking volatile tokens) -> equal False,
      kind "numeric" (the factual-swap defence). Else whitespace-normalised equality, kind "text".
    `volatile_only` is True when the texts differ only in volatile tokens.
    """
    old_is_json, old_parsed = parse_json_container(old)
    new_is_json, new_parsed = parse_json_container(new)
    if old_is_json and new_is_json:
        old_text, new_text = value_as_text(old_parsed, lines=True), value_as_text(new_parsed, lines=True)
        equal = old_parsed == new_parsed
        volatile_only = not equal and mask_volatile(old_text) == mask_volatile(new_text)
        diff = unified(old_text, new_text)
        return {"equal": equal, "kind": "json", "unified": diff, "volatile_only": volatile_only}
    old_text, new_text = value_as_text(old, lines=True), value_as_text(new, lines=True)
    diff = unified(old_text, new_text)
    old_norm, new_norm = normalise_whitespace(old_text), normalise_whitespace(new_text)
    if numbers_of(old_norm) != numbers_of(new_norm):
        return {"equal": False, "kind": "numeric", "unified": diff, "volatile_only": False}
    equal = old_norm == new_norm
    volatile_only = not equal and mask_volatile(old_norm) == mask_volatile(new_norm)
    return {"equal": equal, "kind": "text", "unified": diff, "volatile_only": volatile_only}


# ---- per-kind tier 1 ---------------------------------------------------------------------------

STRUCTURAL_KINDS = frozenset({"RETRIEVER", "TOOL", "EMBEDDING", "PARSER"})
DOC_ID_KEYS = ("id", "doc_id", "document_id", "docid", "uid", "source", "url")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def doc_ids(output: Any) -> list[str]:
    """A retriever's document identities: strings as-is, dicts by their id-like key, else JSON."""
    _, parsed = parse_json_container(output)
    items = parsed if parsed is not None else output
    if isinstance(items, dict):
        for key in ("documents", "docs", "results", "hits", "items"):
            if isinstance(items.get(key), list):
                items = items[key]
                break
    if not isinstance(items, list):
        items = [items]
    ids: list[str] = []
    for item in items:
        if isinstance(item, dict):
            meta: dict[str, Any] = item["metadata"] if isinstance(item.get("metadata"), dict) else {}
            id_key = next((k for k in DOC_ID_KEYS if k in item), None)
            meta_key = next((k for k in DOC_ID_KEYS if k in meta), None)
            if id_key is not None:
                ids.append(str(item[id_key]))
            elif meta_key is not None:
                ids.append(str(meta[meta_key]))
            else:
                ids.append(_canonical(item))
        else:
            ids.append(item if isinstance(item, str) else _canonical(item))
    return ids


def _value(output: Any) -> Any:
    """A JSON container parsed out of a string, else the value itself."""
    _, parsed = parse_json_container(output)
    return parsed if parsed is not None else output


def _vector(output: Any) -> list[float] | None:
    _, parsed = parse_json_container(output)
    value = parsed if parsed is not None else output
    if isinstance(value, dict):
        value = value.get("embedding") or value.get("vector")
    if isinstance(value, list) and value and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, list) and value and all(isinstance(x, int | float) for x in value):
        return [float(x) for x in value]
    return None


def tier1_for_kind(
    kind: str,
    old: Any,
    new: Any,
    *,
    name: str = "",
    old_inputs: Any = None,
    new_inputs: Any = None,
    embedding_threshold: float = 0.99,
) -> Grade | None:
    """The structural grade (unchanged or regressed, at tier 1) for RETRIEVER / TOOL / EMBEDDING /
    PARSER spans; None for other kinds."""
    kind = (kind or "").upper()
    if kind not in STRUCTURAL_KINDS:
        return None
    diff = text_diff(old, new)["unified"]

    def structural(status: Status, rationale: str) -> Grade:
        return Grade(status, Tier.TIER1, rationale, diff)

    if kind == "RETRIEVER":
        before, after = set(doc_ids(old)), set(doc_ids(new))
        if before == after:
            return structural(Status.UNCHANGED, f"RETRIEVER doc-id set equal ({len(before)} doc(s))")
        added, removed = sorted(after - before), sorted(before - after)
        parts = [f"+{', '.join(added[:3])}" if added else "", f"-{', '.join(removed[:3])}" if removed else ""]
        return structural(Status.REGRESSED, "RETRIEVER doc set changed: " + " ".join(p for p in parts if p))
    if kind == "TOOL":
        args_equal = new_inputs is None or _canonical(old_inputs) == _canonical(new_inputs)
        out_equal = _value(old) == _value(new)
        if args_equal and out_equal:
            return structural(Status.UNCHANGED, f"TOOL call deep-equal ({name or 'tool'} args and result)")
        what = "args" if not args_equal else "result"
        return structural(Status.REGRESSED, f"TOOL call changed: {name or 'tool'} {what} differ")
    if kind == "EMBEDDING":
        a, b = _vector(old), _vector(new)
        if a is None or b is None or len(a) != len(b):
            same = _canonical(old) == _canonical(new)
            status = Status.UNCHANGED if same else Status.REGRESSED
            return structural(status, "EMBEDDING output is not a comparable vector; compared as JSON")
        sim = cosine_similarity(a, b)
        status = Status.UNCHANGED if sim >= embedding_threshold else Status.REGRESSED
        return structural(status, f"EMBEDDING cosine {sim:.3f} (threshold {embedding_threshold:.2f})")
    # PARSER
    if _value(old) == _value(new):
        return structural(Status.UNCHANGED, "PARSER output deep-equal")
    return structural(Status.REGRESSED, "PARSER output differs")
