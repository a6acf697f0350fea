"""The comparisons the dashboard shows are compare() results: the page carries the numbers
`diff --json` prints, the latest pair first, then each comparison printed before."""

from __future__ import annotations

import json
from pathlib import Path

from tests.poisson_prove.dashboard.pages import comparison_rows, number, read


def test_the_page_carries_the_numbers_diff_json_prints(prove, paired_store: Path) -> None:
    diff = prove("diff", "--json")
    assert diff.returncode == 0, diff.stderr
    document = json.loads(diff.stdout)
    assert prove("diff", "--event", "violated").returncode == 0  # a second, distinct comparison
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, "")
    assert made.stdout == f"wrote {Path('prove-runs') / 'dashboard.html'}\n"
    html = read(paired_store)
    rows = comparison_rows(html, 0)  # the latest pair: the one `diff` without names compares
    expected = [(c["key"], o) for c in document["conditions"] for o in c["outcomes"]]
    assert len(rows) == len(expected) == 18
    for attrs, (key, result) in zip(rows, expected, strict=True):
        assert attrs["data-condition"] == key and attrs["data-outcome"] == result["outcome"]
        for side in ("before", "after"):
            for field in ("share", "lo", "hi"):
                assert number(attrs[f"data-{side}-{field}"]) == result[side][field]
        assert number(attrs["data-p"]) == result["p"]
        assert number(attrs["data-q"]) == result["q_value"]
        assert number(attrs["data-mde-rise"]) == result["mde_rise"]
        assert number(attrs["data-mde-fall"]) == result["mde_fall"]
    # a comparison printed earlier (from the log) is on the page too; the log's copy of the
    # latest pair is not shown twice
    assert len(comparison_rows(html, 1)) == 9
    assert html.count('class="comparison"') == 2
    assert document["headline"]["word"] in html and document["after"]["name"] in html
