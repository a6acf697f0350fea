"""A benchmark's page: two paired runs of 500 cases x 3 replicates (written through the store's
RunWriter with a stored spec whose `ticket` axis is the case axis) stay a small page, drawn per
pooled group and not per case, with the pooled rows first."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark
from tests.poisson_prove.dashboard.pages import number, read, tags

CASES, REPLICATES = 500, 3


def _outcomes(change: float) -> list[list[str]]:
    """Each case its own difficulty (Beta), fixed draws per (case, replicate) shared by both
    runs; one case in 7 gets `change` harder."""
    rng = np.random.default_rng(11)
    difficulty = rng.beta(1.0, 3.0, CASES)
    u = rng.random((CASES, REPLICATES))
    rows = []
    for k in range(CASES):
        p = min(1.0, difficulty[k] + (change if k % 7 == 0 else 0.0))
        rows.append(["unresolved" if u[k, r] < p else "timeout" if u[k, r] > 0.97 else "resolved"
                     for r in range(REPLICATES)])
    return rows


def test_a_500_case_benchmark_page_is_small_and_drawn_per_pooled_group(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    before = write_benchmark(store, benchmark_episodes(_outcomes(0.0), others={"temperature": 0.0}),
                             name="before")
    write_benchmark(store, benchmark_episodes(_outcomes(0.4), others={"temperature": 0.0}), name="after",
                    paired_with=before)
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    page = store / "dashboard.html"
    assert page.stat().st_size < 2_000_000
    html = read(store)
    document = json.loads(prove("diff", "--json").stdout)
    assert document["case_axis"] == "ticket" and len(document["cases"]) == CASES
    # the comparison: the pooled rows first (the forest of them, then their table)
    found = tags(html)
    forest = html.index("<svg", html.index('<div class="forest pooled">'))
    assert forest < html.index('<table class="rows pooled">') < html.index('class="moved"')
    pooled = [a for t, a in found if t == "tr" and a.get("data-family") == "pooled"]
    assert [(a["data-condition"], a["data-outcome"]) for a in pooled] == [
        (c["key"], o["outcome"]) for c in document["conditions"] for o in c["outcomes"]
    ]
    unresolved = document["conditions"][0]["outcomes"][0]
    assert unresolved["verdict"] == "rose" and number(pooled[0]["data-cases-up"]) == unresolved["cases_up"]
    # drawn per pooled group: one forest and one incidence panel per run, not one per case
    assert html.count("<svg") == 4  # and one before/after incidence panel per pooled group
    # bounded lists: the moved cases of each pooled row and the per-case detail at most 10 each;
    # each run lists its 20 cases with the most failure events
    moved = [a for t, a in found if t == "tr" and "data-d" in a and "data-family" not in a]
    detail = [a for t, a in found if t == "tr" and a.get("data-family") == "case"]
    moved_cases = sum(1 for c in document["cases"] if any(o["d"] for o in c["outcomes"]))
    assert moved_cases > 10 and len(moved) <= 20 and 0 < len(detail) <= 20
    assert f"… and {moved_cases - 10:,} more cases that moved (" in html
    groups = [a for t, a in found if t == "tr" and "data-group" in a]
    assert [a["data-group"] for a in groups] == [document["conditions"][0]["key"]] * 2
    listed = [a for t, a in found if t == "tr" and "data-condition" in a and "data-outcome" not in a]
    assert len(listed) == 2 * 20 and html.count(f"… and {CASES - 20} more cases</p>") == 2
