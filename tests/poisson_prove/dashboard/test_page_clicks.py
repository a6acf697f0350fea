"""The dashboard clicked through in Debian's headless Chromium: the tables sort, the episode
table filters by outcome, error kind, case and "flipped between the runs", an episode opens
its spans, and the pair picker finds a comparison on the page, says how to get one it lacks,
and under --serve asks the server for it. Agent text stays text all along."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import isolated_env, script_path
from tests.poisson_prove.dashboard.browser_kit import CHROMIUM, Watched, opened
from tests.poisson_prove.dashboard.pages import assert_only_the_fixed_script
from tests.poisson_prove.runs import Episodes, write_run

XSS = '<img src=x onerror="window.__pwned = 1">'
SPAN = "search<script>window.__pwned = 2</script>"  # no quote: JSON shows it as written
TICKETS = ("refund", "password" + XSS)


def _ending(shift: int, ticket: int, r: int) -> tuple[str | None, str | None]:
    roll = (r * 7 + shift * (ticket + 1)) % 10
    if roll == 9:
        return None, "RuntimeError"
    return ("resolved" if roll < 6 else "unresolved" if roll < 8 else "timeout"), None


def _episodes(shift: int) -> Episodes:
    episodes = Episodes()
    for i, ticket in enumerate(TICKETS):
        for r in range(40):
            outcome, kind = _ending(shift, i, r)
            t = None if kind else float(1 + r % 9)
            episodes.add({"ticket": ticket, "temperature": 0.5}, r, outcome, t,
                         None if kind else 20.0, case_id=f"case-{r % 4}" + (XSS if r % 4 == 3 else ""),
                         error_kind=kind, error_message="boom " + XSS if kind else None,
                         spans=[{"step": 1, "name": SPAN}])
    return episodes


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed")
def test_sort_filter_open_and_pick_a_pair(prove, workdir: Path, home: Path) -> None:
    store = workdir / "prove-runs"
    base = write_run(store, _episodes(0), name="base")
    middle = write_run(store, _episodes(1), name="middle", paired_with=base)
    newest = write_run(store, _episodes(2), name="newest " + XSS, paired_with=base)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    page_path = store / "dashboard.html"
    assert_only_the_fixed_script(page_path.read_text(encoding="utf-8"))
    # expected from the episodes written, not from the page: the newest run against its baseline
    rows = [(i, r, _ending(2, i, r), _ending(0, i, r)) for i in range(2) for r in range(40)]
    flipped = sum(1 for *_, now, then in rows if now != then)
    timeouts = sum(1 for *_, (outcome, _), _ in rows if outcome == "timeout")
    errors = sum(1 for *_, (_, kind), _ in rows if kind == "RuntimeError")
    case3 = sum(1 for _, r, *_ in rows if r % 4 == 3)
    assert 0 < flipped < len(rows)

    watched = Watched()
    with opened(page_path, watched) as page:
        table = page.locator(f"#episodes-{newest.run_id}")
        shown = table.locator("tr[data-episode]:visible")
        box = page.locator(f'.filters[data-for="episodes-{newest.run_id}"]')
        assert box.is_visible() and shown.count() == len(rows)
        box.locator('input[data-key="data-flipped"]').check()
        assert shown.count() == flipped
        assert box.locator(".count").inner_text() == f"{flipped} of {len(rows)} shown"
        box.locator('input[data-key="data-flipped"]').uncheck()
        box.locator('select[data-key="data-ending"]').select_option("timeout")
        assert shown.count() == timeouts
        box.locator('select[data-key="data-ending"]').select_option("")
        box.locator('select[data-key="data-error-kind"]').select_option("RuntimeError")
        assert shown.count() == errors
        box.locator('select[data-key="data-error-kind"]').select_option("")
        box.locator('input[data-key="col2"]').fill("case-3" + XSS)  # typed as text, matched as text
        assert shown.count() == case3
        box.locator('input[data-key="col2"]').fill("")
        # the condition filter offers each condition once, never the text of a row of spans
        conditions = table.locator("tr[data-episode] td:nth-child(2)").all_inner_texts()
        offered = box.locator('select[data-key="col1"] option').all_inner_texts()
        assert offered == ["any", *sorted({text.strip() for text in conditions})], offered
        # and nothing on the page is wider than the window
        wide = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert wide[0] <= wide[1], wide
        # sorting: by seed, up then down (the numbers as numbers)
        header = table.locator("th", has_text="seed")
        header.click()
        seeds = [int(s) for s in table.locator("tr[data-episode] td:nth-child(5)").all_inner_texts()]
        assert seeds == sorted(seeds) and header.get_attribute("aria-sort") == "ascending"
        header.click()
        seeds = [int(s) for s in table.locator("tr[data-episode] td:nth-child(5)").all_inner_texts()]
        assert seeds == sorted(seeds, reverse=True)
        # an episode opens its spans, as text
        first = table.locator("tr[data-detail]").first
        detail = page.locator("#" + (first.get_attribute("data-detail") or ""))
        assert not detail.is_visible()
        first.click()
        assert detail.is_visible() and SPAN in detail.inner_text()
        first.click()
        assert not detail.is_visible()
        # the pair picker: a pair on the page opens; one it lacks says how to get it
        page.select_option("#pick-before", middle.run_id)
        page.select_option("#pick-after", newest.run_id)
        page.click("#pick-go")
        picked = page.locator("details.comparison.picked")
        assert picked.count() == 1 and picked.get_attribute("open") is not None
        assert picked.get_attribute("data-before") == middle.run_id
        page.select_option("#pick-after", base.run_id)
        page.click("#pick-go")
        assert page.locator("details.comparison.picked").count() == 0
        assert f"poisson-prove diff {middle.run_id} {base.run_id}" in page.inner_text("#pick-answer")
        assert page.evaluate("typeof window.__pwned") == "undefined"
    watched.assert_inert()

    # served: the picker asks the server for the pair, and the page comes back with it first
    child = subprocess.Popen(
        [script_path("poisson-prove"), "dashboard", "--serve"], cwd=workdir, env=isolated_env(home),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        child.stdout.readline()
        line = child.stdout.readline()
        found = re.fullmatch(r"serving (http://127\.0\.0\.1:\d+/) \(Ctrl-C to stop\)\n", line)
        assert found
        served = Watched()
        with opened(found.group(1), served) as page:
            page.select_option("#pick-before", middle.run_id)
            page.select_option("#pick-after", base.run_id)
            page.click("#pick-go")
            page.wait_for_url(re.compile(r"\?before="), timeout=60_000)
            first = page.locator("details.comparison").first
            assert first.get_attribute("data-before") == middle.run_id
            assert first.get_attribute("data-after") == base.run_id
            assert first.locator("summary").inner_text().startswith("chosen pair: middle → base")
        assert served.dialogs == [] and served.errors == []
        assert all(url.startswith(found.group(1)) for url in served.requests)
    finally:
        child.send_signal(signal.SIGINT)
        try:
            child.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # never leave a server behind, whatever failed
            child.kill()
            child.communicate()
