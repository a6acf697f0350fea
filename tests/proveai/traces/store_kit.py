"""A two-agent pipeline captured into a store, shared by the store's tests."""

from __future__ import annotations

from pathlib import Path

from proveai import FileExporter, monitor, trace


@monitor("plan", model="gpt-4o-mini", version="v7", kind="AGENT")
def plan(goal: str) -> dict:
    return {"steps": [lookup(goal), "answer"]}


@monitor("lookup", kind="TOOL", operation="execute_tool", parent_agent="plan")
def lookup(q: str) -> str:
    if q == "fail":
        raise LookupError("no such record")
    return f"found {q}"


def capture(root: Path, goal: str = "refund", checks=None):
    with trace("store-test", exporters=[FileExporter(root)], checks=checks or []) as t:
        try:
            plan(goal)
        except LookupError:
            pass
    return t
