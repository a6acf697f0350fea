"""render/verify_page.py: a verify's report.html is drawn from its agent verdicts: each panel
shows the call that decided its agent, the diff its grade holds (no diff of its own), its
tier's level and confidence; without a fresh trace, the plain table."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from proveai.diff.verdict import AgentVerdict, Grade, Status, Tier
from proveai.render.verify_page import render_verify_html
from proveai.snapshot.model import AgentDefinition, Capture, ExpectedIO, Snapshot
from proveai.snapshot.verify import GateVerdict, JudgeMetrics, VerifyMetrics, VerifyResult
from tests.proveai.trace_kit import closed, span

CLASSIFY, CHECK = AgentDefinition("classify"), AgentDefinition("check", parent_agent="classify")
PIN = Snapshot(
    "triage",
    2,
    {"classify": CLASSIFY, "check": CHECK},
    (Capture("t" * 32, {
        "classify": (ExpectedIO({}, "billing"),),
        "check": (ExpectedIO({}, "first pinned"), ExpectedIO({}, "second pinned")),
    }),),
)
FRESH = closed(
    span("1", "classify", "billing", 0, 1),
    span("2", "check", "first pinned", 2, 3, parent="1", parent_agent="classify"),
    span("3", "check", "second fresh", 4, 5, parent="1", parent_agent="classify"),
)
# the grade's own diff: a page that diffed the outputs again would show other lines
DIFF = "--- old\n+++ new\n@@ -1 +1 @@\n-the grade's old line\n+the grade's new line"
VERDICTS = (
    AgentVerdict("classify", Grade(Status.UNCHANGED, Tier.HASH, "—"), pinned_calls=1, fresh_calls=1),
    AgentVerdict(
        "check",
        Grade(Status.REGRESSED, Tier.JUDGE, "iteration 2/2: judge: lost a fact", DIFF, 0.75),
        "downstream",
        pinned_calls=2,
        fresh_calls=2,
        iterations=(Status.UNCHANGED, Status.REGRESSED),
        decisive=1,
    ),
)


def result() -> VerifyResult:
    metrics = VerifyMetrics(
        mode="rerun", agents=2, counts={"unchanged": 1, "regressed": 1}, judge_model="j", tier_grades=1,
        judge_cache_hits=0, replicates=1, exit_code=1, judge_unfit=None, judge_unreachable=False,
        judge=JudgeMetrics(1, 0, 0.1, 200),
    )
    return VerifyResult(PIN, "rerun", VERDICTS, (), "verify-1", Path("runs"), GateVerdict.FAIL, (), metrics)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.pre: list[str] = []
        self._in_pre = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "pre":
            self._in_pre = True
            self.pre.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._in_pre = False

    def handle_data(self, data: str) -> None:
        if self._in_pre:
            self.pre[-1] += data


def test_the_page_draws_the_agent_verdicts_themselves() -> None:
    page = render_verify_html(result(), FRESH)
    panels = _Text()
    panels.feed(page)
    # the check panel: input, pinned and fresh output of the call that decided (the second)
    assert panels.pre[4:6] == ["second pinned", "second fresh"]
    assert "-the grade's old line" in panels.pre[6] and "+the grade's new line" in panels.pre[6]
    assert "-second pinned" not in page  # no diff of the page's own
    assert "(tier 3, confidence 0.75)" in page and "(tier 0, confidence 1.00)" in page
    assert "classify→check" in page and "root→classify" in page
    assert "1 trace(s) · 2 edge verdict(s)" in page
    assert "<h1>Snapshot 'triage' v2</h1>" in page and "exit 1" in page  # the summary on top


def test_without_a_fresh_trace_the_page_is_the_plain_table() -> None:
    page = render_verify_html(result())
    assert page.startswith("<!doctype html>") and "<svg" not in page
    assert "✗ regressed" in page and "iteration 2/2: judge: lost a fact" in page
