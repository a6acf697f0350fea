"""comparison/pooled.py: runs with a case axis compared per pooled group, counted by case
(STATISTICS.md section 7). Runs are written into a real store (RunStore + RunWriter) with a
stored spec that declares the case axis; every expected number is recounted here from the
episodes as written, in plain Python, and tested with the statistics of stats.clustered."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import poisson_prove
from poisson_prove.comparison.pooled import declared_case_axis, pooled_groups
from poisson_prove.design.conditions import ALL_CASES, condition_key
from poisson_prove.design.spec import case_axis_of
from poisson_prove.errors import ProveError
from poisson_prove.stats import power
from poisson_prove.stats import tests as stats_tests
from poisson_prove.stats.clustered import effective_pairs, sign_flip, within_case_correlation
from poisson_prove.stats.incidence import Z95
from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark

# 8 cases x 4 repeats; "u" unresolved, "t" timeout, "r" resolved, "-" an error (no outcome)
BEFORE = ["uuuu", "uurr", "rrrr", "urrr", "tttr", "rrrr", "uuuu", "rtrr"]
AFTER = ["uuuu", "uuuu", "uurr", "rrrr", "tttt", "rrrr", "rrrr", "rtrr"]
CODES = {"u": "unresolved", "t": "timeout", "r": "resolved", "-": None}


def _outcomes(rows: list[str]) -> list[list[str | None]]:
    return [[CODES[x] for x in row] for row in rows]


def _pair(store: Path, before: list[str], after: list[str], *, cases: bool = True, **options) -> tuple:
    a = write_benchmark(
        store, benchmark_episodes(_outcomes(before), others={"temperature": 0.0}), name="a", cases=cases
    )
    paired = options.pop("paired", True)
    b = write_benchmark(
        store,
        benchmark_episodes(_outcomes(after), others={"temperature": 0.0}),
        name="b",
        cases=cases,
        **({"paired_with": a} if paired else {}),
        **options,
    )
    return a, b


def _wilson(share: float, n: float) -> tuple[float, float]:
    centre = (share + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


SPECS = [
    {"axes": {"temperature": {"values": [0.0]}, "ticket": {"values": ["a"], "cases": True}}},
    {"axes": {"ticket": {"cases": "yes"}}},  # only true says so
    {"axes": {"ticket": {"values": ["a"]}}},
    {"axes": []},
    {},
    None,
]


def test_the_case_axis_is_the_axis_whose_stored_table_says_cases_true() -> None:
    assert [declared_case_axis({"spec": spec}) for spec in SPECS] == ["ticket", None, None, None, None, None]
    assert declared_case_axis({}) is None
    # the spec's own rule, read without importing design.spec on every comparison
    assert [declared_case_axis({"spec": spec}) for spec in SPECS] == [case_axis_of(spec) for spec in SPECS]
    two = {"axes": {"ticket": {"cases": True}, "sample": {"cases": True}}}
    with pytest.raises(ProveError) as ours:
        declared_case_axis({"spec": two})
    with pytest.raises(ProveError) as theirs:
        case_axis_of(two)
    assert ours.value.message == theirs.value.message


def test_a_pooled_group_is_the_conditions_that_share_every_other_axis() -> None:
    cfgs = [{"ticket": t, "temperature": x} for x in (0.0, 0.7) for t in ("refund", "login")]
    groups = pooled_groups([condition_key(c) for c in cfgs], "ticket", ["ticket", "temperature"])
    assert groups.keys == (condition_key({"temperature": 0.0}), condition_key({"temperature": 0.7}))
    assert groups.labels == ("temperature 0.0", "temperature 0.7")
    assert groups.of_condition.tolist() == [0, 0, 1, 1]
    assert groups.case_values == ("refund", "login", "refund", "login")
    alone = pooled_groups([condition_key({"sample": 3}), condition_key({"sample": 7})], "sample", ["sample"])
    assert (alone.keys, alone.labels, alone.case_values) == ((ALL_CASES,), (ALL_CASES,), ("3", "7"))


def test_the_pooled_row_is_the_sign_flip_test_over_the_cases_twins(tmp_path: Path) -> None:
    _pair(tmp_path, BEFORE, AFTER)
    comparison = poisson_prove.compare("a", "b", store=tmp_path)
    assert (comparison.case_axis, comparison.pooled_test) == ("ticket", "sign_flip")
    assert comparison.method == "mcnemar"  # the per-case rows' test
    assert comparison.method_phrase == "paired sign-flip test over cases"
    (group,) = comparison.conditions
    assert (group.key, group.label, group.family) == ('{"temperature":0.0}', "temperature 0.0", "pooled")
    assert comparison.tests == 2 and comparison.case_tests == 16  # 1 group x 2; 8 cases x 2
    rows = {row.outcome: row for row in group.outcomes}
    p_values = {}
    for name, letter in (("unresolved", "u"), ("timeout", "t")):
        twins = [list(zip(bk, ak, strict=True)) for bk, ak in zip(BEFORE, AFTER, strict=True)]
        b = [sum(x == letter != y for x, y in case) for case in twins]
        c = [sum(y == letter != x for x, y in case) for case in twins]
        expected = sign_flip(np.array(b), np.array(c))
        row = rows[name]
        assert (row.family, row.b, row.c, row.pairs, row.cases) == ("pooled", sum(b), sum(c), 32, 8)
        assert (row.cases_up, row.cases_down) == (expected.cases_up, expected.cases_down)
        assert row.p == pytest.approx(expected.p_mid, abs=1e-12)
        assert row.p_exact == pytest.approx(expected.p_exact, abs=1e-12)
        p_values[name] = expected.p_mid
        # the pooled share and its interval on the delete-one-case jackknife's effective n
        events = [sum(x == letter for x in bk) for bk in BEFORE]
        share = sum(events) / 32
        dropped = [(sum(events) - e) / 28 for e in events]
        mean = sum(dropped) / 8
        variance = 7 / 8 * sum((f - mean) ** 2 for f in dropped)
        n_eff = min(share * (1 - share) / variance, 32.0)
        assert (row.before.k, row.before.n, row.before.starred) == (sum(events), 32, False)
        assert row.before.share == pytest.approx(share, abs=1e-12)
        assert row.before.variance == pytest.approx(variance, abs=1e-12)
        assert row.before.effective_n == pytest.approx(n_eff, rel=1e-12)
        assert (row.before.lo, row.before.hi) == pytest.approx(_wilson(share, n_eff), abs=1e-12)
        # could have shown: section 1's MDE at the before share, n = floor(n_eff) pairs
        indicator = [x == letter for bk in BEFORE for x in bk]
        rho = within_case_correlation(np.array(indicator), np.repeat(np.arange(8), 4))
        assert row.within_case_correlation == pytest.approx(rho, abs=1e-12)
        assert row.effective_pairs == pytest.approx(effective_pairs([4] * 8, rho), abs=1e-12)
    q_values = stats_tests.benjamini_hochberg([p_values["unresolved"], p_values["timeout"]])
    assert [rows["unresolved"].q_value, rows["timeout"].q_value] == pytest.approx(list(q_values), abs=1e-12)
    for row in rows.values():
        assert row.verdict == "no change"  # 8 cases cannot show these moves at q = 0.05
        n = math.floor(row.effective_pairs)
        rise, fall = power.condition_mde(round(row.before.share, 12), n, 0.05 / 2)
        assert row.mde_rise == (rise.mde if rise else None) and row.mde_fall == (fall.mde if fall else None)


def test_the_case_rows_are_a_family_of_their_own_each_with_its_d(tmp_path: Path) -> None:
    _pair(tmp_path, BEFORE, AFTER)
    comparison = poisson_prove.compare("a", "b", store=tmp_path)
    assert [case.case for case in comparison.cases] == [f"c{k:04d}" for k in range(8)]
    assert {case.group for case in comparison.cases} == {"temperature 0.0"}
    assert {case.family for case in comparison.cases} == {"case"}
    p = []
    for k, case in enumerate(comparison.cases):
        for row in case.outcomes:
            letter = row.outcome[0]
            b = sum(x == letter != y for x, y in zip(BEFORE[k], AFTER[k], strict=True))
            c = sum(y == letter != x for x, y in zip(BEFORE[k], AFTER[k], strict=True))
            assert (row.family, row.b, row.c, row.d) == ("case", b, c, c - b)
            assert row.p == pytest.approx(stats_tests.mcnemar(b, c).p_mid, abs=1e-12)
            p.append(row.p)
    q_values = stats_tests.benjamini_hochberg(p)  # over the 16 per-case tests, not the pooled ones
    shown = [row.q_value for case in comparison.cases for row in case.outcomes]
    assert shown == pytest.approx(list(q_values), abs=1e-12)


def test_the_headline_and_the_gate_read_the_pooled_rows_only(tmp_path: Path) -> None:
    # 40 cases that all rose by 2 of 3 repeats: the pooled row rises; no single case can
    before = ["rrr"] * 40
    after = ["uur"] * 40
    _pair(tmp_path, before, after)
    comparison = poisson_prove.compare("a", "b", store=tmp_path)
    assert comparison.headline.word == "worse" and comparison.any_worse
    assert comparison.conditions[0].rose == ("unresolved",)
    assert all(case.verdict == "no change" for case in comparison.cases)
    # the per-case family never makes the headline: one case of 30 repeats rose in all of
    # them (its own McNemar is flagged), but one case moving is no evidence about the benchmark
    _pair(tmp_path / "second", ["r" * 30] + ["rrr"] * 39, ["u" * 30] + ["rrr"] * 39)
    quiet = poisson_prove.compare("a", "b", store=tmp_path / "second")
    assert quiet.cases[0].verdict == "worse" and quiet.cases[0].outcomes[0].q_value < 1e-6
    assert quiet.headline.word == "no change" and not quiet.any_worse
    pooled = quiet.conditions[0].outcomes[0]
    assert (pooled.b, pooled.c, pooled.cases_up, pooled.cases_down) == (0, 30, 1, 0)
    assert (pooled.p, pooled.p_exact) == (0.5, 1.0)  # T = 30 or -30, one half each


def test_one_repeat_per_case_is_mcnemar_over_the_cases(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    before = ["u" if x else "r" for x in rng.random(120) < 0.3]
    after = ["u" if x else "r" for x in rng.random(120) < 0.45]
    _pair(tmp_path, before, after)
    row = poisson_prove.compare("a", "b", store=tmp_path).conditions[0].outcomes[0]
    b = sum(x == "u" != y for x, y in zip(before, after, strict=True))
    c = sum(y == "u" != x for x, y in zip(before, after, strict=True))
    expected = stats_tests.mcnemar(b, c)
    assert (row.b, row.c) == (b, c)
    assert abs(row.p - expected.p_mid) <= 1e-12 and abs(row.p_exact - expected.p_exact) <= 1e-12
    assert row.within_case_correlation == 0.0 and row.effective_pairs == 120.0


def test_independent_runs_compare_equal_samples_of_each_case(tmp_path: Path) -> None:
    # case 0 lost its first repeat before to an error: 3 known there, so the first 3 of after
    before = ["-uuu", "rrrr", "uurr", "rrrr"] * 5
    after = ["rrru", "uuuu", "uurr", "rrrr"] * 5
    _pair(tmp_path, before, after, paired=False)
    comparison = poisson_prove.compare("a", "b", store=tmp_path)
    assert (comparison.paired, comparison.method) == (False, "fisher")
    assert comparison.pooled_test == "sign_flip_unpaired"
    assert comparison.method_phrase == "sign-flip test over cases of independent runs"
    row = comparison.conditions[0].outcomes[0]
    x, y = [], []
    for bk, ak in zip(before, after, strict=True):
        known = [o for o in bk if o != "-"]
        n = min(len(known), len(ak))
        x.append(known[:n].count("u"))
        y.append(ak[:n].count("u"))
    expected = sign_flip(np.array(x), np.array(y))
    assert (row.b, row.c, row.pairs) == (None, None, None)  # no twins: no discordant pairs
    assert (row.cases_up, row.cases_down) == (expected.cases_up, expected.cases_down)
    assert row.p == pytest.approx(expected.p_mid, abs=1e-12)
    assert [case.outcomes[0].d for case in comparison.cases] == [b - a for a, b in zip(x, y, strict=True)]
    assert any("5 episodes with an outcome are left out of the pooled test" in w for w in comparison.warnings)


def test_paired_runs_compared_with_fisher_are_read_as_independent(tmp_path: Path) -> None:
    _pair(tmp_path, BEFORE, AFTER)
    fisher = poisson_prove.compare("a", "b", method="fisher", store=tmp_path)
    assert (fisher.paired, fisher.pooled_test) == (True, "sign_flip_unpaired")
    logrank = poisson_prove.compare("a", "b", method="logrank_bh", store=tmp_path)
    assert logrank.pooled_test == "sign_flip"  # the per-case rows test hazards; the pooled row, twins
    assert logrank.cases[0].outcomes[0].statistic is not None


def test_pooled_rates_are_starred_when_censored_before_the_horizon(tmp_path: Path) -> None:
    # before's horizon is 10, after's 20: the common horizon is 10 and after's episodes that
    # end after 10 are still running there (censored at it: not starred); an after episode
    # stopped by its own horizon of 5 is censored before it (starred)
    episodes = benchmark_episodes(_outcomes(["uurr"] * 6), others={"temperature": 0.0}, t=4.0, horizon=10.0)
    a = write_benchmark(tmp_path, episodes, name="a")
    after = benchmark_episodes(_outcomes(["uurr"] * 6), others={"temperature": 0.0}, t=15.0)
    after.horizon[0], after.t[0], after.outcome[0] = 5.0, 5.0, "timeout"
    write_benchmark(tmp_path, after, name="b", paired_with=a)
    row = poisson_prove.compare("a", "b", store=tmp_path).conditions[0].outcomes[0]
    assert (row.before.starred, row.before.share, row.before.k) == (False, 0.5, 12)
    assert row.after.starred and row.after.k == 0 and row.after.share == 0.0


def test_runs_declaring_different_case_axes_are_refused(tmp_path: Path) -> None:
    episodes = benchmark_episodes(_outcomes(BEFORE), others={"temperature": 0.0})
    a = write_benchmark(tmp_path, episodes, name="a")
    write_benchmark(tmp_path, episodes, name="b", axis="temperature", paired_with=a)
    with pytest.raises(ProveError, match='declare different case axes \\("ticket" and "temperature"\\)'):
        poisson_prove.compare("a", "b", store=tmp_path)


def test_a_condition_with_two_case_ids_is_still_refused(tmp_path: Path) -> None:
    episodes = benchmark_episodes(_outcomes(BEFORE), others={"temperature": 0.0})
    episodes.case_id[1] = "someone else"
    a = write_benchmark(tmp_path, episodes, name="a")
    write_benchmark(tmp_path, benchmark_episodes(_outcomes(AFTER), others={"temperature": 0.0}), name="b",
                    paired_with=a)
    with pytest.raises(ProveError, match="ran 2 cases"):
        poisson_prove.compare("a", "b", store=tmp_path)


def test_the_same_episodes_without_a_declared_case_axis_are_compared_per_condition(tmp_path: Path) -> None:
    _pair(tmp_path, BEFORE, AFTER, cases=False)
    comparison = poisson_prove.compare("a", "b", store=tmp_path)
    assert comparison.case_axis is None and comparison.cases == () and comparison.pooled_test is None
    assert len(comparison.conditions) == 8 and comparison.tests == 16
    assert {c.family for c in comparison.conditions} == {"condition"}
