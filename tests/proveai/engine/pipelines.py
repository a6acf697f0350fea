"""A research pipeline (planner -> researcher -> synthesizer -> reviewer) with planted failures.

`run(mode)` returns the closed Trace of one run: `clean`, `loop` (researcher repeats the same
search six times and feeds a stall note on), `check` (synthesizer drops the citations its check
requires), `exception` (researcher raises; the pipeline falls back to empty notes), `path`
(researcher calls a scraper no known-good run uses).
"""

from __future__ import annotations

import random
import re
from typing import Any

from proveai import monitor, regex_match, trace

STYLES = ("Findings", "Notes", "Key points")
TOPICS = ("AI safety", "battery chemistry", "coral reefs", "tidal power", "soil carbon")


@monitor("planner", model="gpt-4o-mini")
def planner(topic: str) -> str:
    return f"research {topic} in two passes: background, then recent results"


@monitor("researcher", parent_agent="planner", model="gpt-4o")
def researcher(plan: str, part: str, mode: str, style: str) -> str:
    if mode == "exception":
        raise ConnectionError("search backend refused the connection")
    if mode == "loop":
        return "still searching; no results yet"
    if mode == "path":
        web_scraper(plan)
    return f"{style} on {part}: three sources agree [1][2]."


@monitor("web_scraper", parent_agent="researcher", kind="TOOL")
def web_scraper(query: str) -> str:
    return f"<html>{query}</html>"


@monitor("synthesizer", parent_agent="researcher", model="gpt-4o")
def synthesizer(notes: list[str], mode: str) -> str:
    usable = [n for n in notes if "[" in n]
    if mode == "check" or not usable:
        return "A summary without sources: " + re.sub(r"\[\d+\]", "", " ".join(notes))[:80]
    return "Summary: " + " ".join(usable) + " As cited in [1]."


@monitor("reviewer", parent_agent="synthesizer", model="claude-haiku-4-5")
def reviewer(draft: str) -> str:
    return "approved" if draft else "rejected: empty draft"


def checks() -> list[Any]:
    return [regex_match("synthesizer", r"\[\d+\]"), regex_match("reviewer", r"^(approved|rejected)")]


def run(mode: str = "clean", seed: int = 0, exporters: list[Any] | None = None) -> Any:
    rng = random.Random(seed)
    topic = TOPICS[seed % len(TOPICS)]
    with trace("research-pipeline", exporters=exporters, checks=checks()) as t:
        plan = planner(topic)
        notes = []
        parts = ("background", "recent results")
        calls = [parts[0]] * 6 if mode == "loop" else list(parts)
        style = rng.choice(STYLES)  # a loop repeats the very same call
        for part in calls:
            try:
                notes.append(researcher(plan, part, mode, style))
            except ConnectionError:
                notes.append("")
        draft = synthesizer(notes, mode)
        reviewer(draft)
    return t
