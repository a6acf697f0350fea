"""The HTML report: self-contained, escaped, no script runs — checked in a real headless Chromium."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from proveai import Span, Trace
from proveai.render.report import render_html, write_html_report
from proveai.replay.attribution import attribute_edges
from proveai.replay.engine import ReplayedSpan, ReplayedTrace

CHROMIUM = Path("/usr/bin/chromium")
XSS_SCRIPT = "<script>window.__pwned = 1; alert('x')</script>"
XSS_IMG = '<img src=x onerror="window.__pwned = 2">'
XSS_SVG = "</text><script>window.__pwned = 3</script><text>"
STATUSES = ("unchanged", "drifted", "regressed", "inconclusive", "path_changed", "iteration_count_changed")


def _span(
    span_id: str,
    name: str,
    output,
    *,
    parent: str | None = None,
    parent_agent: str | None = None,
    start: int = 0,
    kind: str = "CHAT_MODEL",
) -> Span:
    return Span(
        trace_id="ab" * 16,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        operation="invoke_agent",
        kind=kind,
        model="gpt-4o-mini",
        version="v1",
        parent_agent=parent_agent,
        description=None,
        source_file=None,
        start_ns=start,
        end_ns=start + 10,
        status="ok",
        error=None,
        inputs={"ticket": "My order <b>arrived</b> broken"},
        output=output,
        input_messages=[{"role": "system", "content": "Be helpful"}, {"role": "user", "content": XSS_IMG}],
    )


def xss_pair() -> tuple[Trace, ReplayedTrace]:
    spans = [
        _span("1" * 16, "classify", "billing", start=0),
        _span(
            "2" * 16,
            "draft" + XSS_SVG,
            "Refund of $1,200 approved. " + XSS_SCRIPT,
            parent_agent="classify",
            start=20,
        ),
        _span("3" * 16, "qa_check", {"ok": True, "note": XSS_IMG}, parent_agent="draft" + XSS_SVG, start=40),
    ]
    trace = Trace.closed(
        trace_id="ab" * 16,
        name="triage <i>svc</i>",
        service_name="svc",
        spans=spans,
        invocation=None,
        outcome="good",
    )
    new_outputs = {
        "1" * 16: "billing",
        "2" * 16: "Refund of $12,000 approved. " + XSS_SCRIPT,
        "3" * 16: {"note": XSS_IMG, "ok": True},
    }
    replayed = ReplayedTrace(
        trace.trace_id,
        [
            ReplayedSpan(
                s.span_id,
                s.name,
                new_outputs[s.span_id],
                s.model,
                1.0,
                tuple(s.input_messages),
                old_output=s.output,
                inputs=s.inputs,
            )
            for s in spans
        ],
    )
    attribute_edges(trace, replayed)
    return trace, replayed


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append((tag, dict(attrs)))


def test_report_is_self_contained_and_escapes_every_captured_string(tmp_path: Path) -> None:
    trace, replayed = xss_pair()
    statuses = [v.status for v in replayed.edge_verdicts]
    assert statuses == ["unchanged", "regressed", "unchanged"]
    html = render_html([(trace, replayed)], judge_model="claude-haiku-4-5", run_id="r1")
    parser = _Collector()
    parser.feed(html)
    tags = [t for t, _ in parser.tags]
    assert "script" not in tags and "img" not in tags and "link" not in tags and "iframe" not in tags
    assert not any(k.startswith("on") for _, attrs in parser.tags for k in attrs)
    assert not re.search(r"(src|href)=\"https?:", html)
    assert "&lt;script&gt;window.__pwned = 1" in html and "&lt;img src=x onerror=" in html
    csp = next(a for t, a in parser.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "script-src 'none'" in (csp["content"] or "")
    assert ("meta", {"charset": "utf-8"}) in parser.tags
    assert "<svg" in html and "claude-haiku-4-5" in html and "gpt-4o-mini" in html
    for status in STATUSES:
        assert status in html
    path = write_html_report([(trace, replayed)], tmp_path / "sub" / "report.html", judge_model="j")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def worded_pair() -> tuple[Trace, ReplayedTrace]:
    """The XSS pair with classify's output reworded: a change only the judge could decide."""
    trace, replayed = xss_pair()
    worded = ReplayedTrace(
        trace.trace_id,
        [
            ReplayedSpan(r.span_id, r.agent, "A different wording" if i == 0 else r.new_output, r.model, 1.0)
            for i, r in enumerate(replayed.replayed_spans)
        ],
    )
    attribute_edges(trace, worded)  # no judge provider is registered here: the judge skips
    return trace, worded


def test_an_edge_the_judge_could_not_decide_is_inconclusive() -> None:
    trace, replayed = xss_pair()
    assert "s-inconclusive\">inconclusive</span></div>" in render_html([(trace, replayed)])  # card, 0
    trace, worded = worded_pair()
    assert [(v.status, v.inconclusive) for v in worded.edge_verdicts] == [
        ("inconclusive", True), ("regressed", False), ("unchanged", False)
    ]
    html = render_html([(trace, worded)])
    assert '<div class="card"><b>1</b><span class="status s-inconclusive">inconclusive</span></div>' in html
    assert '<div class="card"><b>0</b><span class="status s-drifted">drifted</span></div>' in html
    assert '<td><span class="status s-inconclusive">inconclusive</span></td>' in html
    assert "unjudged" not in html and "the judge could not decide" in html


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed (apt-get install chromium)"
)
def test_no_script_from_agent_output_runs_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    trace, replayed = xss_pair()
    path = write_html_report([(trace, replayed)], tmp_path / "report.html", judge_model="claude-haiku-4-5")
    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-default-apps",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert page.locator("script").count() == 0 and page.locator("img").count() == 0
            # the payload is on the page as text, not as markup
            assert "<script>window.__pwned = 1" in page.inner_text("body")
            assert page.locator("details[open]").count() == 1  # the regressed edge opens by default
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert dialogs == []
    assert all(url.startswith("file:") for url in requests)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    keep = os.environ.get("PROVEAI_TEST_SCREENSHOT")
    if keep:  # opt-in: PROVEAI_TEST_SCREENSHOT=/some/file.png to look at the page
        Path(keep).write_bytes((tmp_path / "report.png").read_bytes())


def _luminance(css_colour: str) -> float:
    """WCAG relative luminance of a computed `rgb(r, g, b)` colour."""
    channels = [int(c) / 255 for c in re.findall(r"\d+", css_colour)[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed (apt-get install chromium)"
)
def test_every_status_badge_is_visible_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    trace, worded = worded_pair()
    path = write_html_report([(trace, worded)], tmp_path / "report.html", judge_model="j")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(path.as_uri())
            badges = page.locator(".cards .status")
            seen = {}
            for i in range(badges.count()):
                badge = badges.nth(i)
                assert badge.is_visible()
                seen[badge.inner_text()] = badge.evaluate(
                    "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]"
                )
            card = page.locator(".card", has=page.locator(".s-inconclusive"))
            assert card.locator("b").inner_text() == "1"
            row = page.locator("td .s-inconclusive")
            assert row.count() == 1 and row.is_visible()
        finally:
            browser.close()
    assert set(seen) == set(STATUSES)
    for status, (fg, bg) in seen.items():
        light, dark = sorted((_luminance(fg), _luminance(bg)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 4.5, f"{status}: {fg} on {bg} is hard to read"
    # inconclusive has a style of its own, not drifted's or the unstyled grey
    assert seen["inconclusive"][1] not in (seen["drifted"][1], "rgb(74, 81, 96)")
