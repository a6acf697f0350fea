"""The dashboard's "where" section in a real headless Chromium: per moved row the agent where
the flipped twins first diverge, one flipped pair's agent calls side by side with the first
divergence marked, and every agent name, output and check name kept as text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from poisson_prove.comparison import compare
from poisson_prove.comparison.twins import attribute_with_pairs, pair_view
from poisson_prove.store.runs import RunStore
from tests.poisson_prove.dashboard.browser_kit import CHROMIUM, Watched, opened
from tests.poisson_prove.dashboard.pages import assert_only_the_fixed_script
from tests.poisson_prove.runs import Episodes, write_run

AGENT = "draft<script>window.__pwned = 1</script>\"'"
CHECK = '<img src=x onerror="window.__pwned = 2">'
TICKET = "refund</td><script>window.__pwned = 3</script>"
OUTCOMES = ("resolved", "bad")


def _spans(bad: bool) -> list[dict]:
    return [
        {"name": "classify", "source": "monitor", "status": "ok", "parent": None,
         "attributes": {"gen_ai.agent.name": "classify", "proveai.output_hash": "sha256:" + "c" * 64}},
        {"name": AGENT, "source": "monitor", "status": "ok", "parent": 0,
         "attributes": {"gen_ai.agent.name": AGENT, "proveai.output_hash": "sha256:" + ("ab"[bad]) * 64,
                        "proveai.check." + CHECK: "bad" if bad else "good"}},
    ]


def _episodes(rate: int) -> Episodes:
    episodes = Episodes()
    for r in range(200):
        bad = r % 20 < rate  # the after run's bad episodes include every one of the before run's
        episodes.add({"ticket": TICKET}, r, OUTCOMES[1] if bad else OUTCOMES[0], 3.0, 20.0, spans=_spans(bad))
    return episodes


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed")
def test_the_flipped_twins_side_by_side_in_chromium(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    kw = {"outcomes": OUTCOMES, "failures": OUTCOMES[1:], "successes": OUTCOMES[:1], "axes": ("ticket",)}
    first = write_run(store, _episodes(1), name="before", **kw)
    write_run(store, _episodes(8), name="after", paired_with=first, **kw)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    page_path = store / "dashboard.html"
    html = page_path.read_text(encoding="utf-8")
    assert_only_the_fixed_script(html)
    assert "<img" not in html and "&lt;script&gt;window.__pwned = 1" in html

    watched = Watched()
    with opened(page_path, watched) as page:
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("script").count() == 1 and page.locator("img").count() == 0
        rows = page.locator(".where-row")
        assert rows.count() == 1
        row = rows.first
        assert row.get_attribute("data-named") == AGENT
        assert row.locator(".where .named").inner_text() == AGENT
        # 70 of 200 pairs flipped, all read; the 130 others are the noise floor, none diverging
        assert [row.get_attribute(f"data-{k}") for k in ("flipped-pairs", "flipped-read")] == ["70", "70"]
        assert row.locator(".pairs-read").inner_text() == "flipped pairs read: 70; unflipped pairs read: 130"
        agents = row.locator("table.where-agents tr[data-agent]")
        assert agents.count() == 1 and agents.first.get_attribute("data-agent") == AGENT
        assert agents.first.locator("td").nth(1).inner_text() == "70/70"
        assert CHECK in row.locator(".where-check").inner_text()  # bad 0.050 -> 0.400, as text
        pair = row.locator("table.twins-pair")
        assert pair.get_attribute("data-first") == AGENT
        lines = pair.locator("tr[data-agent]")
        assert [lines.nth(i).get_attribute("data-agent") for i in range(lines.count())] == ["classify", AGENT]
        assert lines.nth(0).get_attribute("class") == "same"
        marked = pair.locator("tr.first")
        assert marked.count() == 1 and marked.get_attribute("data-agent") == AGENT
        text = marked.inner_text()
        assert AGENT in text and "≠" in text and "first divergence" in text and f"{CHECK}=bad" in text
        assert "aaaaaaaaaa" in text and "bbbbbbbbbb" in text  # the two outputs' hashes, shortened
        assert TICKET in pair.locator("caption").inner_text()
    watched.assert_inert()


def test_the_pair_shown_is_the_pair_inspect_reads(tmp_path: Path) -> None:
    store = tmp_path / "store"
    kw = {"outcomes": OUTCOMES, "failures": OUTCOMES[1:], "successes": OUTCOMES[:1], "axes": ("ticket",)}
    first = write_run(store, _episodes(1), name="before", batches=3, **kw)
    after = _episodes(8)
    for column in vars(after).values():  # the after run stores its episodes in reverse order
        column.reverse()
    write_run(store, after, name="after", paired_with=first, batches=3, **kw)
    comparison = compare("before", "after", store=store)
    attribution, views = attribute_with_pairs(comparison, store=store)
    assert attribution.rows[0].named == AGENT
    runs = RunStore(store)
    (view,) = views
    assert view is not None and view.first_divergence == AGENT and view.before_outcome == "resolved"
    assert view == pair_view(runs.resolve("before"), runs.resolve("after"), view.key, view.replicate)


def test_the_where_section_is_kept_with_its_comparison_and_read_again_when_a_run_moves(
    prove, workdir: Path
) -> None:
    """A refresh does not read the runs' agent spans again for a comparison of unchanged runs:
    the section is kept in the comparison's cache entry (a marker written there, its key intact,
    is what the page shows); a batch file of either run that moved reads them again."""
    store = workdir / "prove-runs"
    kw = {"outcomes": OUTCOMES, "failures": OUTCOMES[1:], "successes": OUTCOMES[:1], "axes": ("ticket",)}
    first = write_run(store, _episodes(1), name="before", **kw)
    after = write_run(store, _episodes(8), name="after", paired_with=first, **kw)

    def page() -> str:
        made = prove("dashboard")
        assert (made.returncode, made.stderr) == (0, ""), made.stderr
        return (store / "dashboard.html").read_text(encoding="utf-8")

    html = page()
    kept = {}
    for entry in (store / ".dashboard-cache").glob("cmp-*.json"):
        document = json.loads(entry.read_text(encoding="utf-8"))
        if "where-row" in document["payload"].get("where", ""):
            kept[entry] = document
    assert len(kept) == 1  # the one comparison of the page, its section with the agent named
    ((entry, document),) = kept.items()
    assert document["payload"]["where"] in html
    document["payload"]["where"] = '<div class="where-row">kept-marker</div>'
    entry.write_text(json.dumps(document), encoding="utf-8")
    assert "kept-marker" in page()
    batch = sorted((after.path / "episodes").glob("*.parquet"))[0]
    stat = batch.stat()
    os.utime(batch, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = page()
    assert "kept-marker" not in again and AGENT.replace("<", "&lt;")[:8] in again
