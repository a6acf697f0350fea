"""The dashboard in a real headless Chromium: agent text stays text, plots draw, no error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.poisson_prove.dashboard.browser_kit import CHROMIUM, Watched, opened
from tests.poisson_prove.dashboard.pages import assert_only_the_fixed_script
from tests.poisson_prove.runs import Episodes, write_run

XSS_SCRIPT = "<script>window.__pwned = 1; alert('x')</script>"
XSS_IMG = '<img src=x onerror="window.__pwned = 2; alert(2)">'
XSS_SVG = "</text><script>window.__pwned = 3</script><text>"
OUTCOMES = ("resolved", XSS_SCRIPT, "timeout" + XSS_SVG)


def _episodes(shift: int) -> Episodes:
    episodes = Episodes()
    for ticket in ("refund", XSS_IMG):
        cfg = {"ticket": ticket, "temperature": 0.5}
        for r in range(60):
            roll = (r * 7 + shift) % 10
            if roll == 9:
                episodes.add(cfg, r, None, None, None, case_id=XSS_SCRIPT, error_kind="RuntimeError",
                             error_message="boom " + XSS_IMG, meta={"case_id": XSS_SCRIPT})
                continue
            outcome = OUTCOMES[0] if roll < 5 else OUTCOMES[1] if roll < 8 else OUTCOMES[2]
            episodes.add(
                cfg, r, outcome, float(1 + r % 15), 20.0, case_id=XSS_SCRIPT,
                meta={"note": XSS_IMG, "case_id": XSS_SCRIPT},
                spans=[{"step": 1, "name": "search" + XSS_SVG, "attributes": {"q": XSS_IMG}},
                       {"step": 2, "name": "reply", "output": XSS_SCRIPT}],
            )
    return episodes


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed")
def test_agent_text_never_runs_and_the_plots_draw_in_chromium(prove, workdir: Path, tmp_path: Path) -> None:
    store = workdir / "prove-runs"
    first = write_run(store, _episodes(0), outcomes=OUTCOMES, failures=OUTCOMES[1:], name="before " + XSS_IMG)
    write_run(store, _episodes(3), outcomes=OUTCOMES, failures=OUTCOMES[1:], paired_with=first,
              name="after " + XSS_SCRIPT)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    page_path = store / "dashboard.html"
    html = page_path.read_text(encoding="utf-8")
    assert "<img" not in html
    assert_only_the_fixed_script(html)  # the payloads are text, not scripts
    assert "&lt;script&gt;window.__pwned = 1" in html

    watched = Watched()
    with opened(page_path, watched) as page:
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("script").count() == 1 and page.locator("img").count() == 0
        body = page.inner_text("body")
        assert XSS_IMG in body and "after " + XSS_SCRIPT in body
        svgs = page.locator("svg")
        assert svgs.count() >= 3  # the forest plot and both runs' incidence panels
        for i in range(svgs.count()):
            if svgs.nth(i).is_visible():
                box = svgs.nth(i).bounding_box()
                assert box and box["width"] > 100 and box["height"] > 50
                assert svgs.nth(i).locator("path").count() > 0
        episode = page.locator("details.episode").first
        episode.locator("summary").click()
        assert XSS_SVG in episode.inner_text()  # the span's name, as text
        page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
    watched.assert_inert()
    assert (tmp_path / "dashboard.png").stat().st_size > 20_000
    keep = os.environ.get("POISSON_PROVE_TEST_SCREENSHOT")
    if keep:  # opt-in: keep the screenshot to look at the page
        Path(keep).write_bytes((tmp_path / "dashboard.png").read_bytes())
