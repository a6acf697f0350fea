"""The three-valued CI gate: worse, inconclusive (a no-rise too small to trust) or pass.

A comparison that found no rise only clears the gate when every tested failure outcome could
have shown a rise of `max_mde` (its section 1 MDE at the condition's observed before-rate and
n is at most `max_mde`). See docs/ci.md and docs/statistics.md, "The three-valued gate".
For runs with a case axis the gate reads the pooled rows only (their n is floor(n_eff), the
pairs the cases are worth), and the way out it names is more cases, not more replicates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from poisson_prove.comparison.result import Comparison
from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.stats.power import replicates_needed

DEFAULT_MAX_MDE = 0.2


@dataclass(frozen=True, slots=True)
class Underpowered:
    """One no-change row that could not have shown a rise of `max_mde`."""

    condition: str
    outcome: str
    mde_rise: float | None  # None: not even a rise to 1 would have been flagged


@dataclass(frozen=True, slots=True)
class GateResult:
    status: str  # worse | inconclusive | pass
    max_mde: float
    underpowered: tuple[Underpowered, ...]
    replicates_needed: int | None  # replicates per run that would settle an inconclusive gate
    allow_inconclusive: bool
    # Runs with a case axis: the cases per pooled group that would settle it even if every
    # repeat of a case agreed (rho = 1, n = the cases); replicates_needed is then None
    cases_needed: int | None = None
    case_axis: str | None = None

    @property
    def exit_code(self) -> int:
        if self.status == "worse":
            return ProveExit.WORSE
        if self.status == "inconclusive" and not self.allow_inconclusive:
            return ProveExit.INCONCLUSIVE
        return ProveExit.OK

    def message(self) -> str | None:
        """The line `check` prints for an inconclusive gate."""
        if self.status != "inconclusive" or not self.underpowered:
            return None
        worst = max(self.underpowered, key=lambda u: 2.0 if u.mde_rise is None else u.mde_rise)
        could = "no rise at all" if worst.mde_rise is None else f"a rise of {worst.mde_rise:.3f}"
        few, rows = ("episodes", "no-change row(s)")
        if self.case_axis is not None:
            few, rows = "cases", "pooled no-change row(s)"
        return (
            f"inconclusive: too few {few} to see a rise of {self.max_mde:.3f} "
            f"({len(self.underpowered)} {rows}; {worst.condition} {worst.outcome} "
            f"could only show {could})"
        )

    def next_line(self) -> str | None:
        """The `next:` line under an inconclusive gate's message, when some size settles it."""
        if self.status != "inconclusive":
            return None
        if self.cases_needed is not None:
            return (
                f"next: run both runs on at least {self.cases_needed} {self.case_axis} cases per pooled "
                f"group to see a rise of {self.max_mde:.3f} (repeats of a case count as one case at worst)"
            )
        if self.replicates_needed is not None:
            return (
                f"next: sweep both runs with --replicates {self.replicates_needed} "
                f"to see a rise of {self.max_mde:.3f}"
            )
        return None

    def to_dict(self) -> dict[str, object]:
        document: dict[str, object] = {
            "status": self.status,
            "max_mde": self.max_mde,
            "allow_inconclusive": self.allow_inconclusive,
            "replicates_needed": self.replicates_needed,
            "underpowered": [
                {"condition": u.condition, "outcome": u.outcome, "mde_rise": u.mde_rise}
                for u in self.underpowered
            ],
        }
        if self.case_axis is not None:  # without a case axis the document is as it always was
            document["cases_needed"] = self.cases_needed
        return document


def gate(comparison: Comparison, max_mde: float, *, allow_inconclusive: bool = False) -> GateResult:
    """Classify a comparison for `check` (runs with a case axis: on its pooled rows)."""
    axis = comparison.case_axis
    if comparison.any_worse:
        return GateResult("worse", max_mde, (), None, allow_inconclusive, case_axis=axis)
    weak = tuple(
        Underpowered(condition.label, row.outcome, row.mde_rise)
        for condition in comparison.conditions
        for row in condition.outcomes
        if row.verdict == "no change" and (row.mde_rise is None or row.mde_rise > max_mde + 1e-9)
    )
    if not weak:
        return GateResult("pass", max_mde, (), None, allow_inconclusive, case_axis=axis)
    needed: int | None
    try:
        # the pooled family's m is groups x events too; at rho = 1 its n is the cases
        per_condition = max(1, len(comparison.outcomes))
        needed = replicates_needed(
            max(1, len(comparison.conditions)), per_condition, q=comparison.q, max_mde=max_mde
        )
    except ProveError:  # no size catches max_mde: no next line, still inconclusive
        needed = None
    if axis is not None:
        return GateResult("inconclusive", max_mde, weak, None, allow_inconclusive, needed, axis)
    return GateResult("inconclusive", max_mde, weak, needed, allow_inconclusive)


def planned_max_mde(manifest: Mapping[str, object]) -> float:
    """The max-mde the run's plan accepted (the default when the run does not say)."""
    design = manifest.get("design")
    if isinstance(design, dict) and design.get("max_mde"):
        return float(design["max_mde"])
    return DEFAULT_MAX_MDE
