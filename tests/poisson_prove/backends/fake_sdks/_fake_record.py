"""Shared by the fake SDKs: an append-only JSON-lines log the tests read back."""

from __future__ import annotations

import json
import os
from typing import Any


def record(event: str, **fields: Any) -> None:
    path = os.environ.get("FAKE_SDK_LOG")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"event": event, **fields}, default=repr) + "\n")


def losses() -> int:
    """How many calls the fake loses (as a lost container would), from $FAKE_SDK_LOSE."""
    return int(os.environ.get("FAKE_SDK_LOSE", "0"))
