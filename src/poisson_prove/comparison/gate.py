"""The three-valued CI gate: worse, inconclusive (a no-rise too small to trust) or pass.

A comparison that found no rise only clears the gate when every tested failure outcome could
have shown a rise of `max_mde` (its section 1 MDE at the condition's observed before-rate and
n is at most `max_mde`). See docs/ci.md and docs/statistics.md, "The three-valued gate".
"""

from __future__ import annotations

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
        return (
            f"inconclusive: too few episodes to see a rise of {self.max_mde:.3f} "
            f"({len(self.underpowered)} no-change row(s); {worst.condition} {worst.outcome} "
            f"could only show {could})"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "max_mde": self.max_mde,
            "allow_inconclusive": self.allow_inconclusive,
            "replicates_needed": self.replicates_needed,
            "underpowered": [
                {"condition": u.condition, "outcome": u.outcome, "mde_rise": u.mde_rise}
                for u in self.underpowered
            ],
        }


def gate(comparison: Comparison, max_mde: float, *, allow_inconclusive: bool = False) -> GateResult:
    """Classify a comparison for `check`."""
    if comparison.any_worse:
        return GateResult("worse", max_mde, (), None, allow_inconclusive)
    weak = tuple(
        Underpowered(condition.label, row.outcome, row.mde_rise)
        for condition in comparison.conditions
        for row in condition.outcomes
        if row.verdict == "no change" and (row.mde_rise is None or row.mde_rise > max_mde + 1e-9)
    )
    if not weak:
        return GateResult("pass", max_mde, (), None, allow_inconclusive)
    needed: int | None
    try:
        per_condition = max(1, len(comparison.outcomes))
        needed = replicates_needed(
            max(1, len(comparison.conditions)), per_condition, q=comparison.q, max_mde=max_mde
        )
    except ProveError:  # no size catches max_mde: no replicates line, still inconclusive
        needed = None
    return GateResult("inconclusive", max_mde, weak, needed, allow_inconclusive)


def planned_max_mde(manifest: dict[str, object]) -> float:
    """The max-mde the run's plan accepted (the default when the run does not say)."""
    design = manifest.get("design")
    if isinstance(design, dict) and design.get("max_mde"):
        return float(design["max_mde"])
    return DEFAULT_MAX_MDE
