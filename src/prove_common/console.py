"""How output is drawn: pretty (rich, colour) on a terminal, plain lines on a pipe."""

from __future__ import annotations

import argparse
import os
import sys
from typing import IO

__all__ = ["format_count", "is_pretty", "wants_color"]


def is_pretty(args: argparse.Namespace, stream: IO[str] | None = None) -> bool:
    """Pretty output only on a terminal, without --plain, NO_COLOR or TERM=dumb.

    Works with any parser: one that never defined `--plain` reads as not plain.
    """
    stream = stream or sys.stdout
    if getattr(args, "plain", False) or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def wants_color(args: argparse.Namespace) -> bool:
    """Colour in pretty output unless `--no-color` (where a parser defines it) or NO_COLOR."""
    return not (getattr(args, "no_color", False) or os.environ.get("NO_COLOR"))


def format_count(n: int) -> str:
    """1746 -> '1,746', as every printed count reads."""
    return f"{n:,}"
