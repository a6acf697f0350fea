"""A monitored tool shared by the capture tests."""

from __future__ import annotations

from proveai import monitor


@monitor("leaf", kind="TOOL", operation="execute_tool")
def leaf(x: str) -> str:
    return x.upper()
