"""How output is drawn: pretty (rich, colour) on a terminal, plain lines on a pipe."""

from __future__ import annotations

import argparse
import os
import sys


def is_pretty(args: argparse.Namespace, stream=None) -> bool:
    """Pretty output only on a terminal, without --plain, NO_COLOR or TERM=dumb."""
    stream = stream or sys.stdout
    if getattr(args, "plain", False) or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def format_count(n: int) -> str:
    """1746 -> '1,746', as every printed count reads."""
    return f"{n:,}"
