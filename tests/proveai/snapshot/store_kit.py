"""Traces captured in this process into a real ./proveai/ store, for the snapshot tests that need
no re-run of the pipeline: pinned with quick_only (a trace captured under pytest must never be
re-run), verified with --quick, which grades the newest stored trace.

classify -> draft (which uses the `policy` tool) -> qa_check, none calling a model: what each
returns is plain Python, and `capture` changes what draft writes the way an edited prompt or a
sampled model would. `route_models` points gpt-* at the fake model server, for the tests that
pin tests/proveai/replay/pipeline.py instead (its agents call a model through proveai).
"""

from __future__ import annotations

from typing import Any

from proveai import FileExporter, Trace, monitor, trace
from proveai.providers import reset_providers
from proveai.snapshot.init import InitResult, init_snapshot
from proveai.snapshot.model import Snapshot
from proveai.snapshot.verify import VerifyOptions, VerifyResult, verify_snapshot
from proveai.store import Store

STYLE = {"tone": "polite"}  # what draft writes; capture(tone=...) sets it for one run


@monitor("classify", kind="CHAT_MODEL", model="m")
def classify(ticket: str) -> str:
    return "refund" if "refund" in ticket.lower() else "other"


@monitor("policy", kind="TOOL", operation="execute_tool", parent_agent="draft")
def policy(category: str) -> dict[str, Any]:
    return {"category": category, "days": 30}


@monitor("draft", parent_agent="classify", model="m")
def draft(category: str) -> str:
    days = policy(category)["days"]
    return f"A {STYLE['tone']} reply about {category}, within {days} days."


@monitor("qa_check", parent_agent="draft", model="m")
def qa_check(reply: str) -> str:
    return "OK" if reply.endswith("days.") else "FIX"


def capture(
    store: Store,
    ticket: str = "I want a refund",
    *,
    tone: str = "polite",
    qa_loops: int = 1,
    qa: bool = True,
    name: str = "support",
) -> Trace:
    """One pipeline run captured into the store's traces folder."""
    STYLE["tone"] = tone
    try:
        with trace(name, exporters=[FileExporter(store.traces_dir)]) as captured:
            reply = draft(classify(ticket))
            for _ in range(qa_loops if qa else 0):
                qa_check(reply)
    finally:
        STYLE["tone"] = "polite"
    return captured


def pin(store: Store, name: str = "latest", **kwargs: Any) -> InitResult:
    """`snapshot init --quick-only` of the newest stored trace (or kwargs' trace_id)."""
    return init_snapshot(
        snapshots_dir=store.snapshots_dir, traces_dir=store.traces_dir, name=name, quick_only=True, **kwargs
    )


def quick_verify(store: Store, snapshot: Snapshot, **options: Any) -> VerifyResult:
    """`snapshot verify --quick --no-judge` of `snapshot`: no re-run, no judge."""
    return verify_snapshot(
        snapshot,
        snapshots_dir=store.snapshots_dir,
        runs_dir=store.runs_dir,
        traces_dir=store.traces_dir,
        options=VerifyOptions(quick=True, no_judge=True, **options),
    )


def route_models(monkeypatch: Any, server: Any) -> None:
    """gpt-* models (tests/proveai/replay/pipeline.py's) answered by the fake model server."""
    monkeypatch.setenv("PROVEAI_PROVIDER_PATTERN", "gpt-*")
    monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", server.openai_url)
    monkeypatch.setenv("PROVEAI_PROVIDER_BACKOFF", "0.01")  # a failing endpoint is retried without sleeping
    reset_providers()  # the registry re-reads the variables just set

