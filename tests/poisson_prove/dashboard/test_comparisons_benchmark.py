"""A benchmark's comparison on the page is diff's: the pooled rows carry the numbers `diff --json`
prints, each pooled row lists the cases that moved on it (recounted here from the JSON's cases),
and the per-case detail is the list `diff` prints by default, in its order."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.poisson_prove.comparison.cases_kit import write_benchmark
from tests.poisson_prove.dashboard.pages import number, read, tags
from tests.poisson_prove.dashboard.stores import pooled_groups

PATCHED = "poisson_prove.examples.mock_benchmark:rollout_patched"
POOLED_FIELDS = {
    "p": "p", "p-exact": "p_exact", "q": "q_value", "b": "b", "c": "c", "cases": "cases",
    "cases-up": "cases_up", "cases-down": "cases_down", "effective-pairs": "effective_pairs",
    "mde-rise": "mde_rise", "mde-fall": "mde_fall",
}


def _moved(document: dict, group: dict, outcome: str) -> list[tuple[str, int]]:
    """(case, d) of the group's cases whose d on `outcome` is not 0, most-moved first, ties in
    the JSON's (the runs') order."""
    moved = [
        (case["case"], row["d"])
        for case in document["cases"] if case["group"] == group["label"]
        for row in case["outcomes"] if row["outcome"] == outcome and row["d"]
    ]
    return sorted(moved, key=lambda m: -abs(m[1]))


def _check_page(html: str, document: dict) -> list[dict]:
    found = tags(html)
    pooled = [a for t, a in found if t == "tr" and a.get("data-family") == "pooled"]
    expected = [(c, o) for c in document["conditions"] for o in c["outcomes"]]
    assert len(pooled) == len(expected)
    for attrs, (group, row) in zip(pooled, expected, strict=True):
        assert (attrs["data-condition"], attrs["data-outcome"]) == (group["key"], row["outcome"])
        for side in ("before", "after"):
            for field in ("share", "lo", "hi"):
                assert number(attrs[f"data-{side}-{field}"]) == row[side][field]
        for name, key in POOLED_FIELDS.items():
            assert number(attrs[f"data-{name}"]) == row[key], name
    # per pooled row: its moved cases, at most 10, then how many more
    blocks = html.split('<div class="moved" ')[1:]
    assert len(blocks) == len(expected)
    for block, (group, row) in zip(blocks, expected, strict=True):
        block = block[: block.index("</div>")]
        moved = _moved(document, group, row["outcome"])
        head = tags("<div " + block)[0][1]
        assert (head["data-condition"], head["data-outcome"]) == (group["key"], row["outcome"])
        assert (number(head["data-up"]), number(head["data-down"])) == (
            sum(d > 0 for _, d in moved), sum(d < 0 for _, d in moved)
        )
        shown = [(a["data-case"], int(a["data-d"])) for t, a in tags(block) if t == "tr" and "data-case" in a]
        assert shown == moved[:10]
        more = re.search(r"… and ([\d,]+) more cases that moved", block)
        assert (int(more.group(1).replace(",", "")) if more else 0) == max(0, len(moved) - 10)
    return [a for t, a in found if t == "tr" and a.get("data-family") == "case"]


def test_the_benchmark_example_on_the_page_is_what_diff_prints(prove, workdir: Path) -> None:
    assert prove("init", "--benchmark").returncode == 0
    assert prove("sweep", "--yes").returncode == 0
    assert prove("sweep", "--yes", "--target", PATCHED, "--pair-with", "latest").returncode == 0
    document = json.loads(prove("diff", "--json").stdout)
    plain = prove("diff", "--plain").stdout
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    html = read(workdir / "prove-runs")
    detail = _check_page(html, document)
    # the per-case detail: the cases and events diff prints by default, in its order
    lines = plain.split("\nper case (detail")[1].split("\n\n")[0].splitlines()[2:]
    printed = [line.split("  ")[0] for line in lines if line.startswith("question ")]
    by_key = {c["key"]: c for c in document["cases"]}
    assert [by_key[a["data-condition"]]["label"] for a in detail] == printed
    cases = {(c["key"], o["outcome"]): o for c in document["cases"] for o in c["outcomes"]}
    for attrs in detail:
        row = cases[(attrs["data-condition"], attrs["data-outcome"])]
        assert number(attrs["data-d"]) == row["d"] != 0
        assert number(attrs["data-q"]) == row["q_value"] and number(attrs["data-p"]) == row["p"]
    more = re.search(r"… and (\d+) more cases that moved", lines[-1])
    assert more and f"… and {more.group(1)} more cases that moved (" in html
    gate = next(a for t, a in tags(html) if t == "p" and a.get("class") == "gate")
    checked = prove("check", "--json")
    assert gate["data-gate"] == json.loads(checked.stdout)["gate"]["status"]
    assert "1 pooled group of 120 cases" in html and "question axis; McNemar per case" in html


def _groups(shift: bool):
    """Two pooled groups (temperature 0.0 and 0.7) of 14 cases x 4 repeats; after the shift, 12
    cases of the second fail on every repeat."""
    return pooled_groups({
        temperature: [
            ["unresolved" if (r + k) % 5 == 0 or (moves and shift and k < 12) else "resolved"
             for r in range(4)]
            for k in range(14)
        ]
        for temperature, moves in ((0.0, False), (0.7, True))
    })


def test_each_pooled_group_lists_its_own_moved_cases(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    before = write_benchmark(store, _groups(False), name="before")
    write_benchmark(store, _groups(True), name="after", paired_with=before)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    document = json.loads(prove("diff", "--json").stdout)
    assert [c["label"] for c in document["conditions"]] == ["temperature 0.0", "temperature 0.7"]
    assert _moved(document, document["conditions"][0], "unresolved") == []
    assert len(_moved(document, document["conditions"][1], "unresolved")) == 12
    html = read(store)
    assert "… and 2 more cases that moved</p>" in html  # the moving group's 12, 10 shown
    detail = _check_page(html, document)
    assert detail and {a["data-condition"] for a in detail} <= {
        c["key"] for c in document["cases"] if c["group"] == "temperature 0.7"
    }
