"""`poisson-prove dashboard`'s page: Wilson intervals for the run rates, a page that stands alone,
refreshed after sweeps, and a damaged batch named on it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.poisson_prove.dashboard.pages import assert_only_the_fixed_script, number, read, tags


def test_run_rates_are_wilson_intervals_of_k_over_n(prove, paired_store: Path) -> None:
    import pyarrow.parquet as pq
    from statsmodels.stats.proportion import proportion_confint

    assert prove("dashboard").returncode == 0
    html = read(paired_store)
    latest = sorted(paired_store.glob("*/manifest.json"))[-1].parent
    table = pq.read_table(latest / "episodes", columns=["cell", "outcome"]).to_pylist()
    manifest = json.loads((latest / "manifest.json").read_text())
    cells = [tag[1] for tag in tags(html) if tag[0] == "tr" and "data-outcome" not in tag[1]]
    rate_cells = [a for t, a in tags(html) if t == "td" and "data-share" in a]
    outcomes = manifest["outcomes"]
    # the newest run's rates table comes first; one td per (condition, outcome) in spec order
    order = [c["key"] for c in manifest["cells"]]
    assert any(a.get("data-condition") == order[0] for a in cells)
    for i, key in enumerate(order):
        n = sum(1 for r in table if r["cell"] == key)
        for j, outcome in enumerate(outcomes):
            k = sum(1 for r in table if r["cell"] == key and r["outcome"] == outcome)
            attrs = rate_cells[i * len(outcomes) + j]
            lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert number(attrs["data-share"]) == pytest.approx(k / n, abs=1e-12)
            assert number(attrs["data-lo"]) == pytest.approx(lo, abs=1e-9)
            assert number(attrs["data-hi"]) == pytest.approx(hi, abs=1e-9)


def test_the_page_stands_alone(prove, paired_store: Path) -> None:
    assert prove("dashboard").returncode == 0
    html = read(paired_store)
    found = tags(html)
    names = {t for t, _ in found}
    assert not names & {"link", "iframe", "img", "object", "embed"}
    assert_only_the_fixed_script(html)
    assert not any(k.startswith("on") for _, attrs in found for k in attrs)
    assert not re.search(r"(src|href)=\"(https?:|//)", html)
    assert ("meta", {"charset": "utf-8"}) in found
    csp = next(a for t, a in found if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in (csp["content"] or "")
    assert html.count("<svg") >= 3  # two forests and the plotted runs' incidence panels
    assert len(html) < 2_000_000


def test_a_dashboard_the_store_has_is_refreshed_and_one_it_lacks_is_not(prove, paired_store: Path) -> None:
    page = paired_store / "dashboard.html"
    assert prove("diff").returncode == 0 and prove("check").returncode == 0
    assert not page.exists()  # no dashboard yet: left alone
    dry = prove("sweep", "--dry-run")
    assert dry.returncode == 0 and not page.exists()
    assert prove("dashboard").returncode == 0
    made = page.stat().st_mtime_ns
    assert prove("sweep", "missing.toml", "--yes").returncode == 1
    assert prove("sweep", "--dry-run").returncode == 0
    assert page.stat().st_mtime_ns == made  # a refusal or a dry run writes nothing, this page included
    swept = prove("sweep", "--yes", "--name", "third run")
    assert swept.returncode == 0 and "warning" not in swept.stderr
    assert "third run" in read(paired_store)
    page.write_text("stale", encoding="utf-8")
    checked = prove("check", "--json")
    assert checked.returncode == 0 and json.loads(checked.stdout)["command"] == "check"
    assert read(paired_store).startswith("<!DOCTYPE html>")
    page.write_text("stale", encoding="utf-8")
    assert prove("dashboard", "--plain").returncode == 0  # the verb itself rewrites it too
    assert read(paired_store).startswith("<!DOCTYPE html>")


def test_a_stopped_sweep_and_its_resume_refresh_the_dashboard(prove, workdir: Path) -> None:
    assert prove("init", "--example").returncode == 0
    assert prove("sweep", "--yes", "--max-rollouts", "300").returncode == 3
    store = workdir / "prove-runs"
    assert prove("dashboard").returncode == 0
    row = next(a for t, a in tags(read(store)) if t == "tr" and "data-run" in a)
    page = read(store)
    assert "partial" in page and "/ 1,746" in page and row["data-run"]
    resumed = prove("sweep", "--resume", "latest", "--yes")
    assert resumed.returncode == 0, resumed.stderr
    page = read(store)
    assert "1,746 / 1,746" in page and ">partial<" not in page


def test_a_damaged_batch_is_named_on_the_page_and_the_rest_is_shown(prove, paired_store: Path) -> None:
    first = sorted(paired_store.glob("*/manifest.json"))[0].parent
    batch = sorted((first / "episodes").glob("*.parquet"))[0]
    batch.write_bytes(batch.read_bytes()[:100])  # truncated after it was renamed into place
    made = prove("dashboard")
    assert (made.returncode, made.stderr) == (0, "")
    html = read(paired_store)
    assert "cannot read this run's episodes" in html and batch.name in html
    assert "cannot compare" in html  # the latest pair needs the damaged run: its refusal shows
    assert html.count('class="rates sortable"') == 1  # the other run's table is still there
