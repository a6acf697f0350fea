"""What the fake Modal and Burla SDKs logged: they stand first on PYTHONPATH (no account, no
network), write each call the adapter made to FAKE_SDK_LOG, and run the calls locally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FAKES = str(HERE / "fake_sdks")
HIDDEN = str(HERE / "hidden_sdks")


def sdk_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def sdk_events(log: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [entry for entry in log if entry["event"] == name]
