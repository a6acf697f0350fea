"""The pipeline example: three proveai `@monitor` agents over a seeded stand-in model, no key.

A support ticket goes through `classify` (which queue it belongs to), `draft` (a JSON reply)
and `qa_check` (approve or reject the reply). The stand-in model answers each call from the
episode's seed, the agent's name and its input, as a real model behind proveai's response
cache keyed by the episode seed would: an agent whose prompt and input are the same in two
twins gives the same output in both, so the first agent whose output differs between twins is
the one the change reached first. The system prompt moves only the odds of each answer (and it
is recorded on the agent's span, so its hash differs between the runs).

The episode ends `malformed` when the draft is not JSON, `rejected` when QA rejects it (most
often after a misrouted ticket), else `sent`. A proveai trace around the three calls labels
each draft with the `json_valid` check.

`rollout_patched` is the same pipeline with one change: the draft prompt asks for a warm reply
in full sentences, and the model, asked that, more often answers in prose than in JSON. The
`malformed` outcome rises; `classify` and `qa_check` are unchanged.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from poisson_prove.episode.model import Episode
from proveai import assert_json, monitor, trace
from proveai.providers.base import ProviderResponse, record_on_current_span

MODEL = "stand-in-1"
HORIZON = 3  # agent calls
QUEUES = ("billing", "shipping", "account")
#: ticket -> the queue it belongs to
TICKETS = {"refund": "billing", "delivery": "shipping", "login": "account"}
CLASSIFY_PROMPT = "Name the queue of this support ticket: billing, shipping or account."
DRAFT_PROMPT = "Reply to the customer as JSON: {\"reply\": ...}. Be brief."
PATCHED_DRAFT_PROMPT = "Reply to the customer as JSON: {\"reply\": ...}. Be warm, in full sentences."
QA_PROMPT = "Approve the reply if it answers the ticket in its queue, else reject it."
#: the system prompt -> the chance the stand-in model answers the draft in prose, not JSON
PROSE_ODDS = {DRAFT_PROMPT: 0.03, PATCHED_DRAFT_PROMPT: 0.15}


def _uniform(seed: int, agent: str, text: str) -> float:
    """A number in [0, 1) fixed by the episode seed, the agent and its input (not its prompt)."""
    digest = hashlib.sha256(f"{seed}|{agent}|{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _model(system: str, user: str, answer: str) -> str:
    """The stand-in model's reply, recorded on the agent's span as a provider's call is."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    response = ProviderResponse(
        text=answer, model=MODEL, messages=({"role": "assistant", "content": answer},), usage={}
    )
    record_on_current_span(messages, response, MODEL, {})
    return answer


@monitor("classify", model=MODEL, kind="CHAT_MODEL")
def classify(ticket: str, seed: int) -> str:
    """The ticket's queue; about one ticket in twenty is misrouted."""
    u = _uniform(seed, "classify", ticket)
    right = TICKETS[ticket]
    queue = right if u >= 0.05 else QUEUES[(QUEUES.index(right) + 1 + int(u * 40)) % len(QUEUES)]
    return _model(CLASSIFY_PROMPT, ticket, queue)


def _draft(ticket: str, queue: str, seed: int, prompt: str) -> str:
    u = _uniform(seed, "draft", f"{ticket}|{queue}")
    if u < PROSE_ODDS[prompt]:
        answer = f"Dear customer, thank you for writing about your {ticket}; the {queue} team is on it."
    else:
        answer = json.dumps({"reply": f"Your {ticket} is with {queue}.", "queue": queue})
    return _model(prompt, f"{ticket} ({queue})", answer)


@monitor("draft", model=MODEL, kind="CHAT_MODEL", parent_agent="classify")
def draft(ticket: str, queue: str, seed: int) -> str:
    """The reply, as JSON (or, now and then, prose)."""
    return _draft(ticket, queue, seed, DRAFT_PROMPT)


@monitor("draft", model=MODEL, kind="CHAT_MODEL", parent_agent="classify")
def draft_patched(ticket: str, queue: str, seed: int) -> str:
    """The patched draft: its prompt asks for a warm reply in full sentences."""
    return _draft(ticket, queue, seed, PATCHED_DRAFT_PROMPT)


@monitor("qa_check", model=MODEL, kind="CHAT_MODEL", parent_agent="draft")
def qa_check(ticket: str, reply: str, seed: int) -> str:
    """approve or reject: a reply from the wrong queue is rejected four times in five."""
    u = _uniform(seed, "qa_check", f"{ticket}|{reply}")
    queue = json.loads(reply).get("queue")
    wrong = queue != TICKETS[ticket]
    verdict = "reject" if u < (0.8 if wrong else 0.04) else "approve"
    return _model(QA_PROMPT, reply, verdict)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _run(cfg: dict[str, Any], seed: int, *, patched: bool) -> Episode:
    ticket = str(cfg["ticket"])
    meta = {"case_id": ticket}
    with trace("support-pipeline", checks=[assert_json("draft")]):
        queue = classify(ticket, seed)
        reply = (draft_patched if patched else draft)(ticket, queue, seed)
        if not _is_json(reply):
            return Episode("malformed", 2, HORIZON, meta)
        verdict = qa_check(ticket, reply, seed)
    return Episode("rejected" if verdict == "reject" else "sent", HORIZON, HORIZON, meta)


def rollout(cfg: dict[str, Any], seed: int) -> Episode:
    """One ticket through classify -> draft -> qa_check."""
    return _run(cfg, seed, patched=False)


def rollout_patched(cfg: dict[str, Any], seed: int) -> Episode:
    """The same pipeline with the patched draft prompt."""
    return _run(cfg, seed, patched=True)
