"""The plan of a benchmark (STATISTICS.md section 7, "Plan"): K cases x m replicates give the
section 1 MDE at within-case correlation 0 (n = K m) and 1 (n = K) over the pooled family
(m = pooled groups x failure outcomes), and the cases (never the replicates) that would pass."""

from __future__ import annotations

import itertools

import numpy as np
from scipy.stats import binom, fisher_exact

from poisson_prove.design.conditions import ALL_CASES, pooled_key
from poisson_prove.design.pooled import cases_needed, pooled_design
from poisson_prove.stats.power import replicates_needed


def _cfgs(cases: int, **others: list[object]) -> list[dict[str, object]]:
    names = ["case", *others]
    values = [[f"c{i}" for i in range(cases)], *others.values()]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]


def _power_by_enumeration(n: int, p0: float, d: float, alpha: float) -> float:
    """Every table of two arms of n, each rejected by SciPy's two-sided Fisher test (x2 > x1)."""
    x = np.arange(n + 1)
    before, after = binom.pmf(x, n, p0), binom.pmf(x, n, p0 + d)
    total = 0.0
    for x1, x2 in itertools.product(range(n + 1), repeat=2):
        if x2 > x1 and fisher_exact([[x1, n - x1], [x2, n - x2]]).pvalue <= alpha:
            total += before[x1] * after[x2]
    return total


def test_the_two_figures_are_section_1_at_n_k_m_and_n_k() -> None:
    # The example benchmark: 120 cases x 3 replicates, one group, one failure outcome.
    design = pooled_design(_cfgs(120), "case", 3, 1, q=0.05, max_mde=0.2)
    assert (design.cases, design.groups, design.replicates, design.pairs) == (120, 1, 3, 360)
    assert (design.independent.mde, design.independent.base_rate) == (0.1072, 0.4)
    assert (design.agreeing.mde, design.agreeing.base_rate) == (0.1906, 0.4)
    assert design.passes and design.agreeing.tests == 1 and design.agreeing.alpha == 0.05
    small = pooled_design(_cfgs(60), "case", 3, 1, q=0.05, max_mde=0.2)
    assert small.agreeing.mde == 0.2654 and not small.passes  # refused at correlation 1...
    assert small.independent.mde == 0.1521 and small.independent.passes  # ...though 180 pairs would pass
    assert cases_needed(small) == 108 == replicates_needed(1, 1)


def test_more_replicates_move_only_the_correlation_0_figure() -> None:
    figures = [pooled_design(_cfgs(60), "case", m, 1, q=0.05, max_mde=0.2) for m in (1, 2, 5, 20)]
    assert len({f.agreeing.exact for f in figures}) == 1
    independent = [f.independent.exact for f in figures]
    assert independent == sorted(independent, reverse=True) and len(set(independent)) == 4
    assert figures[0].independent.exact == figures[0].agreeing.exact  # one replicate: the same n
    assert {cases_needed(f) for f in figures} == {108}


def test_the_family_is_the_pooled_groups_times_the_failure_outcomes() -> None:
    cfgs = _cfgs(40, model=["a", "b", "c"], temp=[0.0, 0.7])  # 6 pooled groups of 40 cases
    design = pooled_design(cfgs, "case", 2, 2, q=0.05, max_mde=0.5)
    assert (design.cases, design.groups) == (40, 6)
    assert design.agreeing.tests == 12 and design.agreeing.alpha == 0.05 / 12
    assert pooled_key(cfgs[0], "case") == '{"model":"a","temp":0.0}'
    assert pooled_key({"case": "c1"}, "case") == ALL_CASES == "all"
    assert cases_needed(design) == replicates_needed(6, 2, max_mde=0.5)


def test_the_correlation_1_mde_holds_against_enumerating_every_table() -> None:
    design = pooled_design(_cfgs(30), "case", 4, 1, q=0.05, max_mde=0.6)
    d = design.agreeing
    assert d.mde is not None and d.base_rate is not None
    at = _power_by_enumeration(30, d.base_rate, d.mde, d.alpha)
    below = _power_by_enumeration(30, d.base_rate, round(d.mde - 0.0001, 4), d.alpha)
    assert below < 0.8 <= at


def test_the_dictionary_carries_both_figures() -> None:
    design = pooled_design(_cfgs(120), "case", 3, 1, q=0.05, max_mde=0.2, values_from="q.jsonl")
    block = design.to_dict()
    assert block["checked_at_correlation"] == 1
    assert (block["cases"], block["pooled_groups"], block["replicates_per_case"]) == (120, 1, 3)
    assert block["correlation_0"] == {
        "n": 360, "mde": 0.1072, "base_rate": 0.4, "direction": "rise", "passes": True, "approximate": False
    }
    assert block["correlation_1"]["n"] == 120 and block["correlation_1"]["mde"] == 0.1906
    assert block["values_from"] == "q.jsonl" and block["case_axis"] == "case"
