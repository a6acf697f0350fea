"""The plan of a benchmark: K cases x m replicates, and the smallest change it can catch.

A spec with a case axis (`cases = true`) is compared by pooled group (the conditions that
differ only on their case, design.conditions.pooled_key), with the case as the unit of evidence
(docs/statistics.md, section 7). Its plan is the section 1 worst-case MDE of one pooled group
alone changing, over the pooled family (m = pooled groups x failure outcomes tests, alpha =
q / m), at the two ends of the within-case correlation of the repeats:

- correlation 0 (a case's repeats are independent): n = K m pairs;
- correlation 1 (a case's repeats always agree): n = K pairs, whatever m.

`--max-mde` is checked at correlation 1, the honest worst case. More replicates move only the
correlation-0 figure, so a failing design's way out is more cases (`cases_needed`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from poisson_prove.design.cases import case_text
from poisson_prove.design.conditions import pooled_key
from poisson_prove.stats.power import DesignMDE, design_mde, replicates_needed


@dataclass(frozen=True)
class PooledDesign:
    """What a benchmark of `cases` cases x `replicates` replicates could detect, per pooled
    group: `independent` at correlation 0 (n = cases x replicates), `agreeing` at correlation 1
    (n = cases), the one `--max-mde` is checked on."""

    case_axis: str
    cases: int  # K: the case ids, each in every pooled group
    groups: int  # the pooled groups (one per combination of the other axes)
    replicates: int  # m, per case
    failure_outcomes: int
    independent: DesignMDE
    agreeing: DesignMDE
    values_from: str | None = None  # the file the case ids were read from, as the spec names it

    @property
    def pairs(self) -> int:
        """n at correlation 0: every (case, replicate) pair counted as independent."""
        return self.cases * self.replicates

    @property
    def passes(self) -> bool:
        return bool(self.agreeing.passes)

    def to_dict(self) -> dict[str, Any]:
        """The `benchmark` block of the --json plan and of the manifest's `design`."""
        return {
            "case_axis": self.case_axis,
            "values_from": self.values_from,
            "cases": self.cases,
            "pooled_groups": self.groups,
            "replicates_per_case": self.replicates,
            "tests": self.agreeing.tests,
            "alpha": self.agreeing.alpha,
            "checked_at_correlation": 1,
            "correlation_0": _figure(self.independent, self.pairs),
            "correlation_1": _figure(self.agreeing, self.cases),
        }


def _figure(design: DesignMDE, n: int) -> dict[str, Any]:
    return {
        "n": n,
        "mde": design.mde,
        "base_rate": design.base_rate,
        "direction": design.direction,
        "passes": design.passes,
        "approximate": design.approximate,
    }


def pooled_design(
    cfgs: Iterable[Mapping[str, Any]],
    case_axis: str,
    replicates: int,
    failure_outcomes: int,
    *,
    q: float,
    max_mde: float,
    values_from: str | None = None,
) -> PooledDesign:
    """The plan of the conditions `cfgs` (each with a value of `case_axis`) at `replicates`."""
    cases: set[str] = set()
    groups: set[str] = set()
    for cfg in cfgs:
        cases.add(case_text(cfg[case_axis]))
        groups.add(pooled_key(cfg, case_axis))
    k, g = len(cases), len(groups)
    return PooledDesign(
        case_axis=case_axis,
        cases=k,
        groups=g,
        replicates=replicates,
        failure_outcomes=failure_outcomes,
        independent=design_mde(k * replicates, g, failure_outcomes, q=q, max_mde=max_mde),
        agreeing=design_mde(k, g, failure_outcomes, q=q, max_mde=max_mde),
        values_from=values_from,
    )


def cases_needed(design: PooledDesign) -> int:
    """The fewest cases with which the design passes at correlation 1, and with every larger
    number of cases (section 1's `replicates_needed` with n = the cases)."""
    d = design.agreeing
    return replicates_needed(design.groups, design.failure_outcomes, q=d.q, max_mde=d.max_mde)
