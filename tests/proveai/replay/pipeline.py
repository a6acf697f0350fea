"""A small monitored pipeline whose agents call a model through proveai's providers.

classify -> lookup (a pure-Python TOOL) -> draft -> qa_check. Used by the replay tests to
capture real traces against the fake model server (models route there by env registration).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proveai import FileExporter, monitor, trace
from proveai.capture.checks import regex_match
from proveai.providers import dispatch

MODEL = "gpt-4o-mini"
CLASSIFY_PROMPT = "Classify the ticket into one word."
DRAFT_PROMPT = "Draft a short, polite reply."
QA_PROMPT = "Check the reply for errors."


def _ask(system: str, user: str) -> str:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return dispatch(MODEL).call(messages, MODEL, temperature=0).text


@monitor("classify", model=MODEL, kind="CHAT_MODEL", version="v1")
def classify(ticket: str) -> str:
    return _ask(CLASSIFY_PROMPT, ticket)


@monitor("lookup", parent_agent="classify", kind="TOOL", version="v1")
def lookup(category: str) -> dict[str, Any]:
    return {"category_len": len(category), "orders": ["A-1", "A-2"]}


@monitor("draft", parent_agent="lookup", model=MODEL, version="v1")
def draft(category: str, history: dict[str, Any]) -> str:
    return _ask(DRAFT_PROMPT, f"Draft a reply for: {category} (orders: {len(history['orders'])})")


@monitor("qa_check", parent_agent="draft", model=MODEL, version="v1")
def qa_check(reply: str) -> str:
    return _ask(QA_PROMPT, f"QA the reply: {reply}")


def run_pipeline(ticket: str, root: Path | None = None, name: str = "ticket-triage") -> Any:
    exporters = [FileExporter(root)] if root is not None else []
    with trace(name, exporters=exporters, checks=[regex_match("classify", r"Answer")]) as t:
        category = classify(ticket)
        history = lookup(category)
        reply = draft(category, history)
        qa_check(reply)
    return t
