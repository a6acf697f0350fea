"""Sequential stopping against the fixed design: flag rate and replicates spent.

Simulates paired runs (independent twins, the least favourable pairing) of the docs' design:
9 conditions x 2 failure outcomes (alpha = 0.05/18), 194 replicates, base rate 0.4, planned
MDE 0.1991, five looks (one per batch of about 39 replicates). For true rises of 0, MDE/2,
MDE and 2*MDE it prints the share flagged by the group-sequential McNemar test and by the
fixed exact McNemar test at the last look, and the replicates the sequential design spent
on average as a ratio of the fixed design's. Run: python benchmarks/bench_sequential.py [RUNS]
"""

from __future__ import annotations

import sys

import numpy as np

from poisson_prove.stats.sequential import sequential_mcnemar

N, ALPHA, BASE, MDE, LOOKS = 194, 0.05 / 18, 0.4, 0.1991, 5


def simulate(rise: float, runs: int, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    before = rng.random((runs, N)) < BASE
    after = rng.random((runs, N)) < BASE + rise
    b = np.cumsum(before & ~after, axis=1)
    c = np.cumsum(after & ~before, axis=1)
    cuts = [round(N * (k + 1) / LOOKS) for k in range(LOOKS)]
    flagged = fixed = spent = 0
    for r in range(runs):
        steps = [(int(b[r, i - 1]), int(c[r, i - 1])) for i in cuts]
        result = sequential_mcnemar(steps, [i / N for i in cuts], ALPHA)
        stopped = result.crossed_look
        flagged += stopped is not None
        spent += cuts[stopped] if stopped is not None else N
        fixed += sequential_mcnemar(steps[-1:], [1.0], ALPHA).p <= ALPHA
    return flagged / runs, fixed / runs, spent / (runs * N)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print(f"design: n={N}, alpha={ALPHA:.5f}, base {BASE}, MDE {MDE}, {LOOKS} looks, {runs} runs each")
    print("true rise   sequential flagged   fixed flagged   replicates spent (sequential / fixed)")
    for label, rise in (("0", 0.0), ("MDE/2", MDE / 2), ("MDE", MDE), ("2*MDE", 2 * MDE)):
        seq, fix, ratio = simulate(rise, runs, seed=7)
        print(f"{label:<6} {rise:6.4f}  {seq:17.3f}  {fix:14.3f}   {ratio:.3f}")


if __name__ == "__main__":
    main()
