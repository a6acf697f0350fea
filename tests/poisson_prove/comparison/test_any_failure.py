"""The "any failure" row (the union of the declared failure outcomes, a family of its own),
through the installed `poisson-prove diff` / `check` on runs written into a real store, checked
against SciPy and statsmodels on counts read back from the Parquet files with pyarrow."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from scipy import stats
from statsmodels.stats.multitest import multipletests

from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark
from tests.poisson_prove.runs import Episodes, write_run

SPREAD = ("f0", "f1", "f2", "f3", "f4", "f5")


def _fates(store: Path, run: str) -> dict[tuple[str, int], str | None]:
    """(cell, replicate) -> outcome of every stored episode of `run` (by name), read with pyarrow."""
    for manifest in store.glob("*/manifest.json"):
        if json.loads(manifest.read_text())["name"] == run:
            table = pq.read_table(manifest.parent / "episodes", columns=["cell", "replicate", "outcome"])
            rows = table.to_pylist()
            return {(r["cell"], r["replicate"]): r["outcome"] for r in rows}
    raise AssertionError(run)


def _mid_p(b: int, c: int) -> tuple[float, float]:
    """McNemar's (mid-p, exact p) from SciPy's binomial test."""
    n, low = b + c, min(b, c)
    if n == 0:
        return 1.0, 1.0
    exact = stats.binomtest(low, n, 0.5).pvalue
    return min(1.0, exact - stats.binom.pmf(low, n, 0.5)), exact


def _spread_runs(store: Path) -> None:
    """One condition, 40 paired replicates: 10 f0 failures before; after, those 10 fail in f1..f5
    (two each) and 10 successes fail there too. Per outcome only f0's fall is significant; the
    total went 10 -> 20."""
    before, after = Episodes(), Episodes()
    for r in range(40):
        before.add({"x": "a"}, r, "f0" if r < 10 else "ok")
        after.add({"x": "a"}, r, SPREAD[1 + (r % 10) // 2] if r < 20 else "ok")
    options: dict[str, Any] = {
        "axes": ("x",), "outcomes": ("ok", *SPREAD), "failures": SPREAD, "successes": ("ok",),
    }
    first = write_run(store, before, name="a", **options)
    write_run(store, after, name="b", paired_with=first, **options)


def test_a_total_rise_spread_over_outcomes_is_never_safer(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    _spread_runs(store)
    text = prove("diff", "a", "b")
    assert text.returncode == 0 and text.stderr == ""
    lines = text.stdout.splitlines()
    assert lines[0].startswith(
        "trade f0: 1 safer, 0 worse · f1: 0 safer, 0 worse · f2: 0 safer, 0 worse · f3: 0 safer, 0 worse · "
        "f4: 0 safer, 0 worse · f5: 0 safer, 0 worse · any failure: 0 safer, 1 worse (paired test"
    )
    assert "trade x a: f0 fell, any failure rose" in lines
    title = next(line for line in lines if line.startswith("rates by "))
    assert title.endswith(
        "q: Benjamini-Hochberg over 6 tests; any failure: the union of the failure outcomes, "
        "Benjamini-Hochberg over its own 1 test"
    )
    row = next(line for line in lines if "  any failure  " in line)
    assert row.split()[-1] == "rose" and "0.250 (10/40)" in row and "0.500 (20/40)" in row

    document = json.loads(prove("diff", "a", "b", "--json").stdout)
    assert document["tests"] == 6 and document["any_failure_tests"] == 1  # the plan's m is untouched
    (condition,) = document["conditions"]
    assert condition["verdict"] == "trade" and condition["rose"] == [] and condition["fell"] == ["f0"]
    # an independent reading of the stored episodes: the twins' union fates
    fates_b, fates_a = _fates(store, "a"), _fates(store, "b")
    failed_b = {key: fates_b[key] in SPREAD for key in fates_b}
    failed_a = {key: fates_a[key] in SPREAD for key in fates_a}
    b = sum(failed_b[k] and not failed_a[k] for k in failed_b)
    c = sum(failed_a[k] and not failed_b[k] for k in failed_b)
    union = condition["any_failure"]
    assert (union["b"], union["c"], union["before"]["k"], union["after"]["k"]) == (b, c, 10, 20)
    mid, exact = _mid_p(b, c)
    assert abs(union["p"] - mid) < 1e-12 and abs(union["p_exact"] - exact) < 1e-12
    # the per-outcome family's q-values are BH over its own 6 p-values, as without the union row
    per_outcome = condition["outcomes"]
    for row_ in per_outcome:
        own_b = sum(fates_b[k] == row_["outcome"] and fates_a[k] != row_["outcome"] for k in fates_b)
        own_c = sum(fates_a[k] == row_["outcome"] and fates_b[k] != row_["outcome"] for k in fates_b)
        assert abs(row_["p"] - _mid_p(own_b, own_c)[0]) < 1e-12
    expected_q = multipletests([r["p"] for r in per_outcome], method="fdr_bh")[1]
    assert np.allclose([r["q_value"] for r in per_outcome], expected_q, rtol=0, atol=1e-12)
    assert [r["verdict"] for r in per_outcome] == ["fell", *["no change"] * 5]

    gate = prove("check", "a", "b", "--max-mde", "1")
    assert gate.returncode == 4, gate.stdout + gate.stderr
    assert gate.stdout.splitlines()[0].startswith("trade f0: 1 safer")


def test_unpaired_runs_test_the_union_with_fisher_in_a_family_of_their_own(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    plan = {  # condition -> (before counts, after counts) of (unresolved, timeout, resolved)
        "refund": ((12, 3, 45), (4, 15, 41)),
        "lookup": ((5, 5, 50), (9, 8, 43)),
    }
    runs = []
    for side in (0, 1):
        episodes = Episodes()
        for case, counts in plan.items():
            fates = [name for name, n in zip(("unresolved", "timeout", "resolved"), counts[side],
                                             strict=True) for _ in range(n)]
            for r, outcome in enumerate(fates):
                episodes.add({"ticket": case, "temperature": 0.0}, r, outcome)
        runs.append(write_run(store, episodes, name="ab"[side]))  # fresh salts: not paired
    document = json.loads(prove("diff", "a", "b", "--json").stdout)
    assert document["method"] == "fisher" and document["tests"] == 4 and document["any_failure_tests"] == 2
    by_label = {c["label"]: c for c in document["conditions"]}
    fates = [_fates(store, name) for name in "ab"]
    p_values = []
    for case in plan:
        (label,) = [label for label in by_label if f"ticket {case}" in label]
        union = by_label[label]["any_failure"]
        k = [sum(1 for (cell, _), o in f.items() if f'"{case}"' in cell and o != "resolved") for f in fates]
        n = [sum(1 for (cell, _), _o in f.items() if f'"{case}"' in cell) for f in fates]
        assert (union["before"]["k"], union["after"]["k"]) == (k[0], k[1])
        expected = stats.fisher_exact([[k[0], n[0] - k[0]], [k[1], n[1] - k[1]]]).pvalue
        assert abs(union["p"] - expected) < 1e-9
        assert union["b"] is None and union["c"] is None
        p_values.append(union["p"])
    q_values = [by_label[label]["any_failure"]["q_value"] for label in by_label]
    assert np.allclose(q_values, multipletests(p_values, method="fdr_bh")[1], rtol=0, atol=1e-12)
    # one --event: no union row, the document as it always was
    single = json.loads(prove("diff", "a", "b", "--json", "--event", "timeout").stdout)
    assert "any_failure_tests" not in single
    assert all("any_failure" not in c for c in single["conditions"])


def _sign_flip(d: list[int]) -> tuple[float, float]:
    """The two-sided sign-flip mid-p and exact p, by enumerating every sign pattern."""
    d = [x for x in d if x]
    t = abs(sum(d))
    totals = Counter(abs(sum(s * x for s, x in zip(signs, d, strict=True)))
                     for signs in itertools.product((1, -1), repeat=len(d)))
    # |T*| >= |t| counts both tails; P(T* >= |t|) is half of it (T* is symmetric) save at t = 0
    total = 2 ** len(d)
    upper = sum(n for v, n in totals.items() if v >= t) / total / (1 if t == 0 else 2)
    equal = totals.get(t, 0) / total / (1 if t == 0 else 2)
    return min(1.0, 2 * (upper - equal / 2)), min(1.0, 2 * upper)


def test_a_benchmark_gets_a_pooled_union_row_counted_by_case(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    rng = np.random.default_rng(7)
    names = ("resolved", "unresolved", "timeout")
    before = rng.choice(names, size=(9, 3), p=(0.6, 0.3, 0.1))
    after = rng.choice(names, size=(9, 3), p=(0.35, 0.15, 0.5))
    a = write_benchmark(store, benchmark_episodes(before, others={"temperature": 0.0}), name="a")
    write_benchmark(store, benchmark_episodes(after, others={"temperature": 0.0}), name="b", paired_with=a)
    document = json.loads(prove("diff", "a", "b", "--json").stdout)
    assert document["tests"] == 2 and document["any_failure_tests"] == 1
    (group,) = document["conditions"]
    union = group["any_failure"]
    assert union["family"] == "pooled"
    failed_b, failed_a = before != "resolved", after != "resolved"
    d = ((failed_a & ~failed_b).sum(axis=1) - (failed_b & ~failed_a).sum(axis=1)).tolist()
    mid, exact = _sign_flip(d)
    assert abs(union["p"] - mid) < 1e-12 and abs(union["p_exact"] - exact) < 1e-12
    assert union["b"] == int((failed_b & ~failed_a).sum()) and union["c"] == int((failed_a & ~failed_b).sum())
    assert union["cases_up"] == sum(x > 0 for x in d) and union["cases_down"] == sum(x < 0 for x in d)
    assert union["before"]["k"] == int(failed_b.sum()) and union["after"]["k"] == int(failed_a.sum())
    assert all("any_failure" not in case for case in document["cases"])  # detail rows carry none
    text = prove("diff", "a", "b").stdout
    assert "Benjamini-Hochberg over 2 pooled tests; any failure: the union of the failure outcomes" in text
