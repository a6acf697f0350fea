"""A benchmark's page in a real headless Chromium: the pooled forest plot draws, the moved cases
are listed under it, and agent text (case ids, run and outcome names) stays text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark
from tests.poisson_prove.dashboard.browser_kit import CHROMIUM, Watched, opened
from tests.poisson_prove.dashboard.pages import assert_only_the_fixed_script
from tests.poisson_prove.dashboard.test_page_browser import XSS_IMG, XSS_SCRIPT, XSS_SVG

OUTCOMES = ("resolved", "unresolved", "timeout" + XSS_SVG)
CASES = [XSS_SCRIPT, XSS_IMG, *(f"ticket-{k:03d}" for k in range(58))]


def _rows(after: bool) -> list[list[str]]:
    """60 cases x 3 repeats; after the change the two payload cases (never unresolved before) and
    every fourth other case end unresolved on every repeat."""
    rows = []
    for k in range(len(CASES)):
        worse = after and (k < 2 or k % 4 == 0)
        rows.append([
            "unresolved" if worse or (k > 1 and (k + r) % 6 == 0)
            else OUTCOMES[2] if (k + r) % 11 == 0 else "resolved"
            for r in range(3)
        ])
    return rows


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed")
def test_the_pooled_forest_and_the_moved_cases_show_and_agent_text_never_runs(
    prove, workdir: Path, tmp_path: Path
) -> None:
    store = workdir / "prove-runs"
    declared = {"outcomes": OUTCOMES, "failures": OUTCOMES[1:]}
    runs = [benchmark_episodes(_rows(after), case_names=CASES, others={"temperature": 0.0})
            for after in (False, True)]
    first = write_benchmark(store, runs[0], name="before " + XSS_IMG, **declared)
    write_benchmark(store, runs[1], name="after " + XSS_SCRIPT, paired_with=first, **declared)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    page_path = store / "dashboard.html"
    html = page_path.read_text(encoding="utf-8")
    assert "<img" not in html
    assert_only_the_fixed_script(html)  # the payloads are text, not scripts

    watched = Watched()
    with opened(page_path, watched) as page:
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("script").count() == 1 and page.locator("img").count() == 0
        # the pooled forest plot: drawn, visible, with its rows' labels as text
        forest = page.locator("details.comparison div.forest.pooled svg")
        assert forest.count() == 1 and forest.is_visible()
        box = forest.bounding_box()
        assert box and box["width"] > 300 and box["height"] > 60
        assert forest.locator("path").count() > 4
        assert "temperature 0.0 · unresolved" in (forest.text_content() or "")  # SVG text, as text
        pooled = page.locator("tr[data-family='pooled']")
        assert pooled.first.locator("td.worse").count() == 1  # unresolved rose: worse
        # the moved cases under it: the payload cases moved most, shown as text
        moved = page.locator("div.moved[data-outcome='unresolved'] tr[data-case]")
        assert moved.count() == 10 and moved.first.is_visible()
        assert [moved.nth(i).get_attribute("data-case") for i in range(2)] == [XSS_SCRIPT, XSS_IMG]
        assert XSS_SCRIPT in moved.nth(0).inner_text() and XSS_IMG in moved.nth(1).inner_text()
        body = page.inner_text("body")
        assert "more cases that moved" in body and "after " + XSS_SCRIPT in body
        assert "timeout" + XSS_SVG in body
        page.screenshot(path=str(tmp_path / "benchmark.png"), full_page=True)
    watched.assert_inert()
    assert (tmp_path / "benchmark.png").stat().st_size > 20_000
    keep = os.environ.get("POISSON_PROVE_TEST_SCREENSHOT_BENCHMARK")
    if keep:  # opt-in: keep the screenshot to look at the page
        Path(keep).write_bytes((tmp_path / "benchmark.png").read_bytes())
