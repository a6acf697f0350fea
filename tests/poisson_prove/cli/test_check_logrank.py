"""`check --method logrank_bh` gates on the runs' default rate test too, and the printed p of
McNemar is its mid-p (the exact p is `p_exact`), through the installed console script.

The runs are built so that the cause-specific log-rank test cannot see the change: in one
condition the early failure (`unresolved`) fell, so more episodes reach the horizon, where the
timeout hazard is the same before and after; the timeout incidence still more than doubled.
Oracles: statsmodels (McNemar exact, survdiff, Benjamini-Hochberg) and SciPy (the mid-p).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.duration.survfunc import survdiff
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from tests.poisson_prove.runs import Episodes, write_run

N = 200
SHIFT = ("refund", 0.55)  # unresolved 120 -> 20 at t 5; timeout 40 -> 90 at t 20 (hazard 1/2 both)
CALM = ("password", 0.0)  # the same episodes before and after
LABELS = {SHIFT: "ticket refund · temperature 0.55", CALM: "ticket password · temperature 0.0"}


def _blocks(**counts: tuple[int, float]) -> list[tuple[str, float]]:
    """(outcome, t) per replicate: `name=(count, t)` blocks in order, then resolved at t 20."""
    out = [(name, t) for name, (count, t) in counts.items() for _ in range(count)]
    return out + [("resolved", 20.0)] * (N - len(out))


BEFORE = {SHIFT: _blocks(unresolved=(120, 5.0), timeout=(40, 20.0)),
          CALM: _blocks(unresolved=(20, 5.0), timeout=(10, 20.0))}
AFTER = {SHIFT: _blocks(unresolved=(20, 5.0), timeout=(90, 20.0)),
         CALM: _blocks(unresolved=(20, 5.0), timeout=(10, 20.0))}


def _episodes(per_cell: dict) -> Episodes:
    episodes = Episodes()
    for (ticket, temperature), rows in per_cell.items():
        for r, (outcome, t) in enumerate(rows):
            episodes.add({"ticket": ticket, "temperature": temperature}, r, outcome, t, 20.0)
    return episodes


def _mid_p(b: int, c: int) -> float:
    low, total = min(b, c), b + c
    return min(1.0, 2 * (binom.cdf(low, total, 0.5) - binom.pmf(low, total, 0.5) / 2))


def _rows(document: dict) -> dict[tuple[str, str], dict]:
    return {
        (c["label"], row["outcome"]): row
        for c in document["conditions"]
        for row in [*c["outcomes"], *([c["any_failure"]] if c.get("any_failure") else [])]
    }


def test_logrank_check_fails_when_the_default_rate_test_finds_a_rise(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    a = write_run(store, _episodes(BEFORE), name="a")
    write_run(store, _episodes(AFTER), name="b", paired_with=a)

    # The default check: McNemar, exit 4 (timeouts rose where the early failures fell)
    default = prove("check", "a", "b", "--json")
    assert default.returncode == 4 and default.stderr == "", default.stderr
    reference = json.loads(default.stdout)
    assert reference["method"] == "mcnemar" and reference["gate"]["status"] == "worse"
    _the_table_says_its_p_is_mcnemars_mid_p(prove("check", "a", "b"), reference)

    text = prove("check", "a", "b", "--method", "logrank_bh")
    assert text.returncode == 4, (text.stdout, text.stderr)
    assert text.stderr == ""
    lines = text.stdout.splitlines()
    assert lines[0].startswith(
        "trade unresolved: 1 safer, 0 worse · timeout: 0 safer, 1 worse "
        "(cause-specific log-rank test and McNemar on the rates); 2 conditions"
    )
    assert lines[1] == (
        "method cause-specific log-rank test and McNemar on the rates (logrank_bh), chosen with --method; "
        "McNemar, the default for runs paired at sweep time, gates too: a row rose or fell when either "
        "test says so"
    )
    assert f"trade {LABELS[SHIFT]}: unresolved fell, timeout rose" in lines
    title = next(line for line in lines if line.startswith("rates by "))
    assert "chi2, p: the log-rank test; q: Benjamini-Hochberg over 4 tests; McNemar q: McNemar on the " \
        "rates, Benjamini-Hochberg over its own 4 tests (its mid-p and exact p in --json)" in title
    header = lines[lines.index(title) + 1].split()
    assert header[-6:] == ["chi2", "p", "q", "McNemar", "q", "result"]
    timeout_row = next(line for line in lines if line.startswith(LABELS[SHIFT]))
    timeout_row = lines[lines.index(timeout_row) + 1]  # unresolved first (declared order), then timeout
    assert "0.200 (40/200)" in timeout_row and "0.450 (90/200)" in timeout_row
    assert timeout_row.endswith("rose (McNemar)")  # the log-rank test alone saw nothing

    # on a runner: stdout stays the one document; the annotation names the q that flagged the rise
    as_json = prove("check", "a", "b", "--method", "logrank_bh", "--json", env={"GITHUB_ACTIONS": "true"})
    assert as_json.returncode == 4
    document = json.loads(as_json.stdout)
    assert document["exit_code"] == 4 and document["gate"]["status"] == "worse"
    (annotation,) = as_json.stderr.splitlines()
    assert annotation.startswith(f"::warning title=poisson-prove check%3A {LABELS[SHIFT]} trade::")
    mcnemar_q = _rows(reference)[(LABELS[SHIFT], "timeout")]["q_value"]
    assert f"timeout rose from 0.200 (40/200) [0.150, 0.261] to 0.450 (90/200) [0.383, 0.519] " \
        f"(McNemar q {mcnemar_q:.2g}); while unresolved fell" in annotation
    assert (document["method"], document["rate_method"]) == ("logrank_bh", "mcnemar")
    rows, expected = _rows(document), _rows(reference)
    assert set(rows) == set(expected) and len(rows) == 2 * 3  # 2 outcomes + any failure per condition

    # The rate test beside log-rank is exactly the default check's: same p, exact p, counts, q
    for key, row in rows.items():
        rate, mine = row["rate_test"], expected[key]
        assert rate["method"] == "mcnemar"
        assert (rate["b"], rate["c"], rate["pairs"]) == (mine["b"], mine["c"], mine["pairs"])
        assert (rate["p"], rate["p_exact"], rate["q_value"]) == (mine["p"], mine["p_exact"], mine["q_value"])
        assert rate["verdict"] == mine["verdict"]
        assert row["pairs"] is None and row["b"] is None  # the row's own numbers are log-rank's
        if row["verdict"] == "no change":  # "could have shown": the rate test's MDE, as the default's
            assert row["logrank_verdict"] == rate["verdict"] == "no change"
            assert (row["mde_rise"], row["mde_fall"]) == (mine["mde_rise"], mine["mde_fall"])
            moved = row["after"]["share"] - row["before"]["share"]
            assert -(row["mde_fall"] or 1.0) < moved < (row["mde_rise"] or 1.0)  # None: not even to 0 / 1
    timeout = rows[(LABELS[SHIFT], "timeout")]
    assert (timeout["verdict"], timeout["logrank_verdict"], timeout["rate_test"]["verdict"]) == (
        "rose", "no change", "rose"
    )
    assert timeout["mde_rise"] is None  # a row that moved shows no "could have shown"
    helped = prove("check", "--help")
    assert helped.returncode == 0 and "a rise either test finds counts" in " ".join(helped.stdout.split())

    # Independently: McNemar from the twins, log-rank from the episodes, BH per family
    per_family: dict[str, list[tuple[str, str]]] = {"outcome": [], "union": []}
    for cell, label in LABELS.items():
        before, after = BEFORE[cell], AFTER[cell]
        for outcome in ("unresolved", "timeout", "any failure"):
            counted = ("unresolved", "timeout") if outcome == "any failure" else (outcome,)
            x = np.array([fate in counted for fate, _ in before])
            y = np.array([fate in counted for fate, _ in after])
            b, c = int((x & ~y).sum()), int((~x & y).sum())
            rate = rows[(label, outcome)]["rate_test"]
            assert (rate["b"], rate["c"]) == (b, c)
            exact = sm_mcnemar([[0, b], [c, 0]], exact=True).pvalue
            assert rate["p_exact"] == pytest.approx(exact, abs=1e-12)
            assert rate["p"] == pytest.approx(_mid_p(b, c), abs=1e-12)
            time = np.array([t for _, t in before] + [t for _, t in after])
            status = np.r_[x, y].astype(int)
            group = np.r_[np.zeros(N), np.ones(N)]
            statistic, p_value = survdiff(time, status, group)
            assert rows[(label, outcome)]["statistic"] == pytest.approx(statistic, abs=1e-9)
            assert rows[(label, outcome)]["p"] == pytest.approx(p_value, abs=1e-9)
            per_family["union" if outcome == "any failure" else "outcome"].append((label, outcome))
    assert rows[(LABELS[SHIFT], "timeout")]["statistic"] == pytest.approx(0.0, abs=1e-12)
    for keys in per_family.values():
        for field, pick in (("q_value", lambda r: r), ("q_value", lambda r: r["rate_test"])):
            p = [pick(rows[k])["p"] for k in keys]
            q = multipletests(p, method="fdr_bh")[1]
            assert [pick(rows[k])[field] for k in keys] == pytest.approx(list(q), abs=1e-12)


def _the_table_says_its_p_is_mcnemars_mid_p(text, document: dict) -> None:
    """The default report's legend names the p it prints (the mid-p); --json has both."""
    assert text.returncode == 4 and text.stderr == ""
    lines = text.stdout.splitlines()
    title = next(line for line in lines if line.startswith("rates by "))
    assert "; p: McNemar mid-p (the exact p is p_exact in --json); q: Benjamini-Hochberg over 4 " in title
    row = _rows(document)[(LABELS[CALM], "timeout")]  # 10 of 200 each side, the same twins: b = c = 0
    assert (row["b"], row["c"], row["p"], row["p_exact"]) == (0, 0, 1.0, 1.0)
    shift = _rows(document)[(LABELS[SHIFT], "timeout")]
    b, c = shift["b"], shift["c"]
    assert (b, c) == (40, 90)
    assert shift["p"] == pytest.approx(_mid_p(b, c), abs=1e-15)
    assert shift["p_exact"] == pytest.approx(sm_mcnemar([[0, b], [c, 0]], exact=True).pvalue, abs=1e-15)
    assert shift["p"] < shift["p_exact"]  # they differ, and the printed one is the mid-p
    printed = next(line for line in lines if line.startswith(LABELS[SHIFT]))
    printed = lines[lines.index(printed) + 1]
    assert f"  {b}  {c}  {shift['p']:.1e}  " in printed
