"""Verdict colours and the trade mark, on two paired runs with a real trade; a long legend
stays inside its figure."""

from __future__ import annotations

import json
import re
from pathlib import Path

from poisson_prove.dashboard.collect import ConditionCurves, Curve
from poisson_prove.dashboard.plots import pair_incidence_svg
from tests.poisson_prove.dashboard.pages import comparison_rows, read, tags
from tests.poisson_prove.runs import Episodes, write_run


def _run(unresolved: float, timeout: float) -> Episodes:
    episodes = Episodes()
    for ticket in ("refund", "lookup"):
        cfg = {"ticket": ticket, "temperature": 0.0}
        for r in range(200):
            u = (r * 0.618034) % 1.0  # the same u for a replicate in both runs: twins move together
            moved = ticket == "refund"
            if u < (unresolved if moved else 0.1):
                outcome = "unresolved"
            elif u < (unresolved if moved else 0.1) + (timeout if moved else 0.1):
                outcome = "timeout"
            else:
                outcome = "resolved"
            episodes.add(cfg, r, outcome, 5.0, 20.0, case_id=ticket)
    return episodes


def test_a_trade_is_marked_and_rows_are_coloured_by_verdict(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    before = write_run(store, _run(unresolved=0.1, timeout=0.5), name="before")
    write_run(store, _run(unresolved=0.6, timeout=0.05), name="after", paired_with=before)
    diff = json.loads(prove("diff", "--json").stdout)
    verdicts = {c["label"]: c["verdict"] for c in diff["conditions"]}
    assert verdicts == {
        "ticket refund · temperature 0.0": "trade",
        "ticket lookup · temperature 0.0": "no change",
    }
    assert prove("dashboard").returncode == 0
    html = read(store)
    rows = comparison_rows(html, 0)
    assert [r["data-outcome"] for r in rows] == ["unresolved", "timeout"] * 2
    cells = [(a.get("class"), t) for t, a in tags(html) if t == "td"]
    assert ("trade", "td") in cells and ("rose", "td") in cells and ("fell", "td") in cells
    assert "trade ◆" in html
    forest = html[html.index("<svg") : html.index("</svg>")]
    for colour in ("#c62828", "#2e7d32", "#f9a825"):  # worse, safer, the trade's diamond
        assert colour in forest


def test_a_long_legend_wraps_inside_the_figure() -> None:
    """Four failure outcomes with long names, before and after: eight legend entries in one row
    were wider than a two-panel figure and started left of it (cut off on the page)."""
    curves = tuple(
        Curve(f"outcome-{'x' * 20}-{i}", (0.0, 5.0, 10.0), (0.0, 0.1, 0.2), (0.0, 0.05, 0.1), (0.0, 0.2, 0.3))
        for i in range(4)
    )
    panels = [ConditionCurves("first", curves), ConditionCurves("second", curves)]
    svg = pair_incidence_svg(panels, panels, "steps")
    assert svg is not None and svg.startswith("<svg")
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    texts = [float(x) for x in re.findall(r'<text x="(-?[\d.]+)"', svg)]
    starts = [float(x) for x in re.findall(r' d="M(-?[\d.]+) ', svg)]
    assert texts and starts and min(texts + starts) >= 0 and max(texts + starts) <= width
    assert svg.count("before</text>") == svg.count("after</text>") == 4  # every entry drawn
