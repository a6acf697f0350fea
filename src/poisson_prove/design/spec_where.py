"""Where a key is in a sweep spec's text, for error messages that name the file and the line
(`Where`), and the checks every table of the spec shares: its keys, and a target's form."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from poisson_prove.errors import ProveError
from prove_common.suggest import did_you_mean

_TARGET_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def is_target_ref(text: str) -> bool:
    """Whether `text` reads "module:function" (dotted module, identifier function)."""
    return bool(_TARGET_RE.match(text))


class Where:
    """Finds the line of a key in the spec's text, for error messages."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, table: str, key: str | None = None) -> int | None:
        """The 1-based line of `key` in `[table]` ('' is the top level), or of the header."""
        current = ""
        header_line = None
        for number, line in enumerate(self.lines, start=1):
            stripped = line.strip()
            header = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?", stripped)
            if header:
                current = header.group(1).replace('"', "").replace(" ", "")
                if key is None and current == table:
                    return number
                full = f"{table}.{key}" if table else key
                if key is not None and (current == full or current.startswith(f"{full}.")):
                    return number
                if current == table:
                    header_line = number
                continue
            if key is not None and current == table and re.match(rf'^"?{re.escape(key)}"?\s*=', stripped):
                return number
            # dotted keys at the top level: axes.x.values = [...]
            dotted = rf"^{re.escape(table)}\.{re.escape(key or '')}\s*="
            if key is not None and current == "" and table and re.match(dotted, stripped):
                return number
        return header_line

    def at(self, table: str, key: str | None = None) -> str:
        line = self.line_of(table, key)
        return f"{self.path}:{line}" if line else str(self.path)

    def error(self, table: str, key: str | None, message: str, *, next_: Sequence[str] = ()) -> ProveError:
        return ProveError(f"{self.at(table, key)}: {message}", suggestions=next_)


def check_keys(where: Where, table: str, data: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for key in data:
        if key not in allowed:
            shown = f"[{table}]" if table else "the spec"
            raise where.error(
                table,
                key,
                f"unknown key {key!r} in {shown}{did_you_mean(key, allowed)}",
                next_=[f"the keys of {shown} are: {', '.join(allowed)}"],
            )
