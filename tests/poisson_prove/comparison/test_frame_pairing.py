"""Property: McNemar's b and c equal a brute-force join of twins, whatever rows are missing."""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poisson_prove
from tests.poisson_prove.runs import Episodes, write_run

OUTCOME = st.sampled_from(["resolved", "unresolved", "timeout", None])  # None: errored
CELLS = [("refund", 0.0), ("password", 0.7)]


def _episodes(rows: dict[tuple[str, float], dict[int, str | None]], times: dict) -> Episodes:
    episodes = Episodes()
    for (ticket, temperature), by_replicate in rows.items():
        for r, outcome in by_replicate.items():
            errored = outcome is None
            episodes.add({"ticket": ticket, "temperature": temperature}, r, outcome,
                         None if errored else times[(ticket, r)], None if errored else 20.0,
                         case_id=ticket, error_kind="RuntimeError" if errored else None)
    return episodes


side = st.fixed_dictionaries({cell: st.dictionaries(st.integers(0, 15), OUTCOME, min_size=1, max_size=16)
                              for cell in CELLS})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=side, after=side, shift=st.integers(0, 19))
def test_b_and_c_match_a_brute_force_join(before, after, shift) -> None:
    # tied integer times, all within the horizon
    times = {(t, r): float((7 * r + shift) % 20 + 1) for t in ("refund", "password") for r in range(16)}
    with tempfile.TemporaryDirectory() as folder:
        a = write_run(folder, _episodes(before, times), batches=2)
        b = write_run(folder, _episodes(after, times), paired_with=a, batches=3)
        try:
            comparison = poisson_prove.compare(a.name, b.name, store=folder)
        except poisson_prove.ProveError as refused:
            # only when a run has no episode with an outcome at all
            assert "has no episode with an outcome" in refused.message
            return
    for condition in comparison.conditions:
        cell = next(c for c in CELLS if condition.key == f'{{"temperature":{c[1]},"ticket":"{c[0]}"}}')
        twins = [
            (before[cell][r], after[cell][r])
            for r in sorted(set(before[cell]) & set(after[cell]))
            if before[cell][r] is not None and after[cell][r] is not None
        ]
        for row in condition.outcomes:
            if row.verdict == "not tested":
                continue
            assert row.pairs == len(twins)
            assert row.b == sum(x == row.outcome != y for x, y in twins)
            assert row.c == sum(y == row.outcome != x for x, y in twins)
            n_before = sum(o is not None for o in before[cell].values())
            k_before = sum(o == row.outcome for o in before[cell].values())
            assert (row.before.n, row.before.k) == (n_before, k_before)
            assert row.before.share == k_before / n_before
