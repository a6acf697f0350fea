"""A value as text, the one way both packages write an output, a tool call or a field.

The rule: a string is itself; anything else (numbers, None, lists, dicts, objects) is JSON
with sorted keys, non-ASCII kept as it is (`ensure_ascii=False`), and what JSON cannot hold
written with `str()`. Sorted keys make two equal values read the same whatever order they were
built in, so text diffs and tier-1 comparisons see only real changes. Compact by default (one
line, `", "` and `": "` separators); `lines=True` indents by two so that a unified diff can
compare a structure line by line. `limit` clips the text to that many characters and says so.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["TRUNCATED", "value_as_text"]

# what a clipped text ends with
TRUNCATED = "\n[... truncated]"


def value_as_text(value: Any, *, limit: int | None = None, lines: bool = False) -> str:
    """`value` as text (see the module's rule); at most `limit` characters plus the marker."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(
            value, sort_keys=True, ensure_ascii=False, indent=2 if lines else None, default=str
        )
    if limit is not None and len(text) > limit:
        return text[:limit] + TRUNCATED
    return text
