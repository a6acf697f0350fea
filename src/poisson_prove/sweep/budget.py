"""The budget-aware plan: the largest design a budget buys, and the smallest rise it detects.

A sweep of C conditions and R replicates runs C x R episodes at `per_episode_usd` each (the
backend's compute estimate plus the user's own model-call cost per episode). The design the
budget buys is the largest R that fits; its detectable rise is the worst-case MDE of
docs/statistics.md section 1 at that R. A budget that cannot reach `max_mde` is refused with
the cheapest design that can (`replicates_needed`).

A benchmark (a spec with a case axis, docs/statistics.md section 7) keeps its cases: the budget
buys R replicates per case (`case_budget_design`), at least 1; one that cannot run every case
once is refused naming how many cases it covers. Its figure checked (within-case correlation
1, n = the cases) does not move with R; more replicates move only the correlation-0 figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.stats.power import design_mde, replicates_needed, suggested_max_mde

#: The spec's key (in the backend's table, e.g. [local]) for the user's own cost per episode.
COST_KEY = "cost_per_episode"


@dataclass(frozen=True, slots=True)
class BudgetDesign:
    budget_usd: float
    per_episode_usd: float
    replicates: int
    cost_usd: float
    detectable_rise: float | None  # worst-case MDE, rounded up to 3 decimals; None: none
    max_mde: float
    fits: bool  # the design the budget buys detects max_mde
    cheapest_replicates: int
    cheapest_usd: float
    # A benchmark's: its cases, how many of them the budget runs once, and the rise detectable
    # at within-case correlation 0 (`detectable_rise` is then the correlation-1 one).
    cases: int | None = None
    cases_covered: int | None = None
    detectable_rise_independent: float | None = None

    def line(self) -> str:
        if self.cases is not None:
            return (
                f"with ${self.budget_usd:,.2f} you can run each of the {self.cases:,} cases "
                f"{_times(self.replicates)} and detect {_rise(self.detectable_rise_independent)} if a "
                f"case's repeats are independent, {_rise(self.detectable_rise)} if they always agree "
                "(more money buys repeats, which move only the first)"
            )
        rise = "no rise at all" if self.detectable_rise is None else f"a rise of {self.detectable_rise:.3f}"
        return f"with ${self.budget_usd:,.2f} you can detect {rise} at the worst base rate"

    def to_dict(self) -> dict[str, Any]:
        if self.cases is not None:
            return {
                **self._common(),
                "cases": self.cases,
                "cases_covered": self.cases_covered,
                "detectable_rise_independent": self.detectable_rise_independent,
            }
        return self._common()

    def _common(self) -> dict[str, Any]:
        return {
            "budget_usd": self.budget_usd,
            "per_episode_usd": self.per_episode_usd,
            "replicates": self.replicates,
            "cost_usd": self.cost_usd,
            "detectable_rise": self.detectable_rise,
            "max_mde": self.max_mde,
            "fits": self.fits,
            "cheapest_replicates": self.cheapest_replicates,
            "cheapest_usd": self.cheapest_usd,
        }


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n:,} times"


def _rise(rise: float | None) -> str:
    return "no rise at all" if rise is None else f"a rise of {rise:.3f}"


def per_episode_cost(backend_price: float, settings: Mapping[str, Any]) -> float:
    """The backend's estimate plus the spec's own `cost_per_episode` (model calls)."""
    own = settings.get(COST_KEY, 0.0)
    if isinstance(own, bool) or not isinstance(own, (int, float)) or own < 0 or not math.isfinite(own):
        raise ProveError(f"{COST_KEY} must be a number of dollars of at least 0, got {own!r}")
    return float(backend_price) + float(own)


def budget_design(
    budget_usd: float,
    per_episode_usd: float,
    conditions: int,
    failure_outcomes: int,
    *,
    q: float = 0.05,
    max_mde: float = 0.2,
) -> BudgetDesign:
    """The largest design `budget_usd` buys and what it can detect."""
    _check_money(budget_usd, per_episode_usd)
    cheapest = replicates_needed(conditions, failure_outcomes, q=q, max_mde=max_mde)
    cheapest_usd = cheapest * conditions * per_episode_usd
    # The float guard keeps $40 at $0.01 an episode from buying 3999 instead of 4000.
    replicates = math.floor(budget_usd / (conditions * per_episode_usd) * (1 + 1e-12))
    rise = None
    if replicates >= 1:
        rise = suggested_max_mde(design_mde(replicates, conditions, failure_outcomes, q=q, max_mde=max_mde))
    return BudgetDesign(
        budget_usd=float(budget_usd),
        per_episode_usd=per_episode_usd,
        replicates=replicates,
        cost_usd=replicates * conditions * per_episode_usd,
        detectable_rise=rise,
        max_mde=max_mde,
        fits=replicates >= cheapest,
        cheapest_replicates=cheapest,
        cheapest_usd=cheapest_usd,
    )


def _check_money(budget_usd: float, per_episode_usd: float) -> None:
    if not math.isfinite(budget_usd) or budget_usd <= 0:
        raise ProveError(
            f"--budget must be a positive number of dollars, got {budget_usd}", exit_code=ProveExit.USAGE
        )
    if per_episode_usd <= 0:
        raise ProveError(
            "the backend's cost estimate is $0 per episode, so a budget cannot size the design",
            suggestions=[f"give your model calls' cost per episode as {COST_KEY} in the backend's table"],
        )


def case_budget_design(
    budget_usd: float,
    per_episode_usd: float,
    cases: int,
    groups: int,
    failure_outcomes: int,
    *,
    q: float = 0.05,
    max_mde: float = 0.2,
) -> BudgetDesign:
    """The replicates per case `budget_usd` buys for a benchmark of `cases` cases in `groups`
    pooled groups, and what it can detect at within-case correlation 0 and 1. It fits when it
    runs every case at least once (whether the cases reach max_mde is the plan's own check)."""
    _check_money(budget_usd, per_episode_usd)
    conditions = cases * groups
    # The float guard keeps $3.60 at $0.01 an episode over 120 cases from buying 2 instead of 3.
    replicates = math.floor(budget_usd / (conditions * per_episode_usd) * (1 + 1e-12))
    covered = math.floor(budget_usd / (groups * per_episode_usd) * (1 + 1e-12))
    agreeing = suggested_max_mde(design_mde(cases, groups, failure_outcomes, q=q, max_mde=max_mde))
    independent = None
    if replicates >= 1:
        independent = suggested_max_mde(
            design_mde(cases * replicates, groups, failure_outcomes, q=q, max_mde=max_mde)
        )
    return BudgetDesign(
        budget_usd=float(budget_usd),
        per_episode_usd=per_episode_usd,
        replicates=replicates,
        cost_usd=replicates * conditions * per_episode_usd,
        detectable_rise=agreeing,
        max_mde=max_mde,
        fits=replicates >= 1,
        cheapest_replicates=1,
        cheapest_usd=conditions * per_episode_usd,
        cases=cases,
        cases_covered=min(covered, cases),
        detectable_rise_independent=independent,
    )


def case_refusal(design: BudgetDesign, case_axis: str) -> ProveError:
    """The refusal of a budget that cannot run every case of a benchmark once."""
    covered = design.cases_covered or 0
    once = math.ceil(design.cheapest_usd * 100) / 100
    suggestions = [f"--budget {once:.2f} runs each of the {design.cases:,} cases once"]
    if covered:
        suggestions.append(f"use at most {covered:,} cases in axes.{case_axis}")
    return ProveError(
        f"with ${design.budget_usd:,.2f} you can run {covered:,} of the {design.cases:,} cases once, "
        "not every case; nothing was run",
        suggestions=suggestions,
    )


def refusal(design: BudgetDesign) -> ProveError:
    """The refusal of a budget that cannot reach max_mde, with the cheapest design that can."""
    return ProveError(
        f"{design.line()}, and you accept {design.max_mde:.3f}",
        suggestions=[
            f"--budget {math.ceil(design.cheapest_usd * 100) / 100:.2f} "
            f"(--replicates {design.cheapest_replicates}) detects a rise of {design.max_mde:.3f}",
            f"--max-mde {design.detectable_rise:.3f}" if design.detectable_rise else "raise the budget",
        ],
    )
