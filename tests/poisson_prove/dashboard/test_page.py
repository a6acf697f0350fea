"""`poisson-prove dashboard`: the page's numbers are diff's, it stands alone, it is refreshed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.poisson_prove.dashboard.pages import comparison_rows, number, read, tags


@pytest.fixture
def paired_store(prove, workdir: Path) -> Path:
    """Two real sweeps of the example agent, the second paired with the first."""
    assert prove("init", "--example").returncode == 0
    assert prove("sweep", "--yes").returncode == 0
    assert prove("sweep", "--yes", "--pair-with", "latest").returncode == 0
    return workdir / "prove-runs"


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
    assert not names & {"script", "link", "iframe", "img", "object", "embed"}
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


def test_an_empty_store_and_bad_flags_are_one_error_line(prove, workdir: Path) -> None:
    from tests.conftest import assert_clean_error

    assert_clean_error(prove("dashboard"), 1, "no store at")
    assert not (workdir / "prove-runs").exists()
    assert_clean_error(prove("dashboard", "--plots", "-1"), 2, "--plots")


def test_without_matplotlib_the_command_says_how_to_install_it(
    prove, paired_store: Path, tmp_path: Path
) -> None:
    from tests.conftest import assert_clean_error

    blocker = tmp_path / "blocker" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    import os

    path = os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])
    result = prove("dashboard", env={"PYTHONPATH": path})
    assert_clean_error(result, 1, "matplotlib", "next: pip install 'poisson-prove[dashboard]'")
    assert not (paired_store / "dashboard.html").exists()


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
    assert html.count('class="rates"') == 1  # the other run's table is still there


def test_on_a_terminal_a_bar_counts_the_runs_then_clears(
    paired_store: Path, workdir: Path, home: Path
) -> None:
    import os
    import pty
    import subprocess

    from tests.conftest import isolated_env, script_path

    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [script_path("poisson-prove"), "dashboard"], cwd=workdir, stdin=subprocess.DEVNULL,
        stdout=follower, stderr=follower, env=isolated_env(home, {"TERM": "xterm"}),
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert child.wait(timeout=60) == 0
    text = drawn.decode()
    assert "runs" in text and "2/2" in text and "Traceback" not in text
    assert text.rstrip().endswith(f"wrote {Path('prove-runs') / 'dashboard.html'}")
