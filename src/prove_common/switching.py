"""The GIL's switch interval for a stretch of work, put back after it: the one helper for it.

The sweep moves it both ways: longer while a thousand threads wait on I/O (each waiter wakes
every interval to ask for the GIL), shorter while one thread runs episodes beside a helper
thread that comes back from C code for the GIL (the default 5 ms is then what each return
costs). It is never moved against what the caller chose: a longer one asked for keeps a
caller's longer interval, a shorter one a caller's shorter interval.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal


@contextmanager
def switch_interval(seconds: float, *, only: Literal["longer", "shorter"]) -> Iterator[None]:
    """Run the block with the switch interval at `seconds` if that makes it `only` longer or
    shorter than it is; then put back what it was, unless something in the block set its own."""
    before = sys.getswitchinterval()
    if (seconds <= before) if only == "longer" else (seconds >= before):
        yield
        return
    sys.setswitchinterval(seconds)
    ours = sys.getswitchinterval()  # as the interpreter rounds it
    try:
        yield
    finally:
        if sys.getswitchinterval() == ours:
            # The interpreter keeps whole microseconds, truncating: `before` as read back
            # (9.9e-05 for 0.0001) would be kept a microsecond shorter each time without the nudge.
            sys.setswitchinterval(before + 1e-9)
