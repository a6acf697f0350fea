"""The plan: what a sweep will run, on which seeds, where, at what cost, and the smallest change
it can catch.

`make_plan` computes it (no printing). A `Plan` holds its run's salt, so it names its own
episodes: `plan.seeds(condition, replicates)`, and `plan.episodes()` / `plan.tasks()` in the
order a sweep runs them. `sweep.UnderpoweredError` is the refusal of a design whose worst
condition could not catch a change of `--max-mde` 4 times in 5. A spec with a case axis is
planned as a benchmark (design.pooled): `plan.pooled` holds both figures, and `plan.design` is
the one checked, at within-case correlation 1.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from poisson_prove.backends import estimate_cost
from poisson_prove.design.cases import case_text
from poisson_prove.design.pooled import PooledDesign, cases_needed, pooled_design
from poisson_prove.design.seeding import episode_seeds
from poisson_prove.design.seeds_ahead import seeds_ahead_for
from poisson_prove.design.spec import Axis, Condition, SweepSpec
from poisson_prove.episode.run import Task
from poisson_prove.errors import ProveError
from poisson_prove.stats.power import design_mde, replicates_needed, suggested_max_mde

if TYPE_CHECKING:
    from poisson_prove.design.seeds_ahead import SeedReader, SeedsAhead

DEFAULT_MAX_MDE = 0.2
DEFAULT_Q = 0.05
#: The most episodes one run may plan. A billion rows is about 30 GB of Parquet and days of even
#: the fastest rollouts; more is a typo (a replicates with extra zeros), refused before any work.
MAX_ROLLOUTS = 1_000_000_000
#: Replicates whose seeds are derived at a time: memory stays bounded whatever `replicates` is.
_SEED_BLOCK = 4096
#: Episodes handed on at a time by `Plan.episodes` (whole replicates across the conditions).
_EPISODE_LIST = 4096


@dataclass(frozen=True)
class Plan:
    """Everything the plan lines say, as data: what a sweep will run (each condition's
    replicates, on the seeds its `salt` gives), where, at what cost and what it can detect."""

    target: str
    target_id: str
    t_unit: str
    replicates: int
    salt: str
    conditions: tuple[Condition, ...]
    axes: tuple[Axis, ...]
    outcomes: tuple[str, ...]
    failures: tuple[str, ...]
    successes: tuple[str, ...]
    backend: str
    concurrency: int
    cost_usd: float
    design: Any  # stats.power.DesignMDE
    max_mde: float
    q: float
    settings: Mapping[str, Any] = field(default_factory=dict)
    pooled: PooledDesign | None = None  # a benchmark's plan (a spec with a case axis)

    @property
    def rollouts(self) -> int:
        return len(self.conditions) * self.replicates

    @property
    def passes(self) -> bool:
        return bool(self.design.passes)

    def case_ids(self) -> dict[str, str] | None:
        """A benchmark's case id of each condition (by key), what its episodes store as
        `case_id`; None without a case axis."""
        if self.pooled is None:
            return None
        axis = self.pooled.case_axis
        return {c.key: case_text(c.cfg[axis]) for c in self.conditions}

    def seeds(self, condition: str, replicates: Iterable[int]) -> list[int]:
        """The seeds of these replicates of `condition` (its key) in this plan."""
        return episode_seeds(self.salt, condition, replicates)

    def seeds_ahead(self) -> SeedsAhead | None:
        """The pipe through which another process derives this plan's seeds ahead of its
        episodes (design.seeds_ahead); None for a plan too small to gain from it."""
        return seeds_ahead_for(self.salt, [c.key for c in self.conditions], self.replicates, _SEED_BLOCK)

    def episodes(
        self,
        skip: Set[tuple[str, int]] = frozenset(),
        limit: int | None = None,
        read_seeds: SeedReader | None = None,
        *,
        skip_grows: bool = False,
    ) -> Iterator[tuple[str, Mapping[str, Any], int, int]]:
        """The planned episodes not in `skip` (stored (condition, replicate) pairs) as plain
        (condition, cfg, replicate, seed) tuples, replicate by replicate across the conditions
        (so a run stopped early has every condition about equally far), at most `limit` of
        them. Lazy: seeds are derived a block of replicates at a time, so memory does not grow
        with `replicates`; with `read_seeds` (the reader of `seeds_ahead`), each block's seeds are
        read from it instead (the same numbers). `skip_grows`: `skip` is added to while the
        episodes are taken, so it is asked at each one."""
        if skip_grows:  # `skip` is added to meanwhile (a condition that settled): asked each time
            return self._each_episode(skip, limit, read_seeds)
        # The episodes are runs of tuples chained by itertools, not yielded one by one: the
        # loop that runs them takes each from C code, which matters at a microsecond an episode.
        chained = itertools.chain.from_iterable(self._episode_lists(skip, read_seeds))
        return chained if limit is None else itertools.islice(chained, max(limit, 0))

    def _seed_blocks(
        self, read_seeds: SeedReader | None
    ) -> Iterator[tuple[int, range, list[tuple[str, Mapping[str, Any], list[int]]]]]:
        """Each block of replicates with every condition's key, cfg and seeds of it."""
        for first in range(0, self.replicates, _SEED_BLOCK):
            block = range(first, min(first + _SEED_BLOCK, self.replicates))
            if read_seeds is None:
                pairs = [(c.key, c.cfg, self.seeds(c.key, block)) for c in self.conditions]
            else:
                blocks = read_seeds.block(first, block)
                pairs = [(c.key, c.cfg, own) for c, own in zip(self.conditions, blocks, strict=True)]
            yield first, block, pairs

    def _each_episode(
        self, skip: Set[tuple[str, int]], limit: int | None, read_seeds: SeedReader | None
    ) -> Iterator[tuple[str, Mapping[str, Any], int, int]]:
        left = limit if limit is not None else -1
        for _, block, pairs in self._seed_blocks(read_seeds):
            for offset, replicate in enumerate(block):
                for key, cfg, seeds in pairs:
                    if skip and (key, replicate) in skip:
                        continue
                    if left == 0:
                        return
                    left -= 1
                    yield (key, cfg, replicate, seeds[offset])

    def _episode_lists(
        self, skip: Set[tuple[str, int]], read_seeds: SeedReader | None
    ) -> Iterator[Iterable[tuple[str, Mapping[str, Any], int, int]]]:
        """`episodes` a few thousand at a time, in their order."""
        for first, block, pairs in self._seed_blocks(read_seeds):
            count = len(pairs)
            step = max(1, _EPISODE_LIST // max(1, count))  # replicates per list
            keys, cfgs = [key for key, _, _ in pairs], [cfg for _, cfg, _ in pairs]
            for start in range(0, len(block), step):
                stop = min(start + step, len(block))
                if skip:
                    yield [
                        (key, cfg, first + offset, seeds[offset])
                        for offset in range(start, stop)
                        for key, cfg, seeds in pairs
                        if (key, first + offset) not in skip
                    ]
                    continue
                # Four columns zipped, each built in C (lists repeated, seeds interleaved): zip
                # hands the loop one tuple it reuses, where a list of tuples built one per episode.
                replicates = range(first + start, first + stop)
                each_replicate = map(itertools.repeat, replicates, itertools.repeat(count))
                interleaved = zip(*[seeds[start:stop] for _, _, seeds in pairs], strict=True)
                yield zip(
                    keys * len(replicates),
                    cfgs * len(replicates),
                    itertools.chain.from_iterable(each_replicate),
                    itertools.chain.from_iterable(interleaved),
                    strict=True,
                )

    def tasks(
        self,
        skip: Set[tuple[str, int]] = frozenset(),
        limit: int | None = None,
        read_seeds: SeedReader | None = None,
        *,
        skip_grows: bool = False,
    ) -> Iterator[Task]:
        """`episodes` as Tasks, for executors that ship episodes elsewhere."""
        for key, cfg, replicate, seed in self.episodes(skip, limit, read_seeds, skip_grows=skip_grows):
            yield Task(key, cfg, replicate, seed)

    def design_dict(self) -> dict[str, Any]:
        """The manifest's `design` block."""
        d = self.design
        block = {
            "mde": d.mde,
            "base_rate": d.base_rate,
            "direction": d.direction,
            "passes": d.passes,
            "max_mde": d.max_mde,
            "tests": d.tests,
            "q": d.q,
            "alpha": d.alpha,
            "approximate": d.approximate,
        }
        if self.pooled is not None:
            block["benchmark"] = self.pooled.to_dict()
        return block


def backend_settings(spec: SweepSpec, backend: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The backend's spec table with the command line's overrides (those given) on top."""
    settings = dict(spec.backends.get(backend, {}))
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return settings


def make_plan(
    spec: SweepSpec,
    *,
    salt: str,
    target: str | None = None,
    replicates: int | None = None,
    backend: str = "local",
    settings: Mapping[str, Any] | None = None,
    max_mde: float = DEFAULT_MAX_MDE,
    q: float = DEFAULT_Q,
    conditions: Sequence[Condition] | None = None,
) -> Plan:
    """The plan for `spec` with this run's overrides; raises nothing for an underpowered design
    (check `plan.passes`), but ProveError for a cost above `settings["max_cost"]`."""
    settings = dict(settings or {})
    chosen = tuple(conditions) if conditions is not None else tuple(spec.conditions())
    n = replicates if replicates is not None else spec.replicates
    if len(chosen) * n > MAX_ROLLOUTS:
        raise ProveError(
            f"the design plans {len(chosen) * n:,} rollouts ({len(chosen):,} conditions x "
            f"{n:,} replicates); one run holds at most {MAX_ROLLOUTS:,}",
            suggestions=["lower replicates (the plan's smallest rise line says how many you need)"],
        )
    pooled = None
    if spec.case_axis is not None:
        axis = next(a for a in spec.axes if a.name == spec.case_axis)
        pooled = pooled_design(
            (c.cfg for c in chosen),
            spec.case_axis,
            n,
            len(spec.failures),
            q=q,
            max_mde=max_mde,
            values_from=axis.values_from,
        )
        design = pooled.agreeing  # --max-mde is checked at within-case correlation 1
    else:
        design = design_mde(n, len(chosen), len(spec.failures), q=q, max_mde=max_mde)
    rollouts = len(chosen) * n
    # the backend's estimate plus the spec's own cost per episode (model calls), as --budget prices it
    cost = float(estimate_cost(backend, rollouts, settings)) + rollouts * own_cost_per_episode(settings)
    concurrency = settings.get("concurrency") or 1
    return Plan(
        target=target or spec.target,
        target_id=spec.target_id,
        t_unit=spec.t_unit,
        replicates=n,
        salt=salt,
        conditions=chosen,
        axes=spec.axes,
        outcomes=spec.outcomes,
        failures=spec.failures,
        successes=spec.successes,
        backend=backend,
        concurrency=int(concurrency),
        cost_usd=cost,
        design=design,
        max_mde=max_mde,
        q=q,
        settings=settings,
        pooled=pooled,
    )


def own_cost_per_episode(settings: Mapping[str, Any]) -> float:
    """The backend table's `cost_per_episode` (what the user's model calls cost per episode), 0
    when it does not say; refused unless a finite number of at least 0."""
    own = settings.get("cost_per_episode", 0.0)
    if isinstance(own, bool) or not isinstance(own, (int, float)) or not 0 <= own < float("inf"):
        raise ProveError(f"cost_per_episode must be a number of dollars of at least 0, got {own!r}")
    return float(own)


def cost_error(plan: Plan) -> ProveError | None:
    """The refusal of a plan whose estimate is above --max-cost, if it is."""
    cap = plan.settings.get("max_cost")
    if cap is None or plan.cost_usd <= float(cap):
        return None
    return ProveError(
        f"the estimate ${plan.cost_usd:,.2f} is above --max-cost ${float(cap):,.2f}; nothing was run",
        suggestions=["raise --max-cost, or lower --replicates"],
    )


def fraction_text(value: float) -> str:
    """A --max-mde as typed to the grid: 3 decimals, a 4th only when it has one (0.2001)."""
    return f"{value:.3f}" if abs(round(value, 3) - value) < 1e-12 else f"{value:.4f}"


def mde_above_text(mde: float, limit: float) -> str:
    """An MDE above `limit`, printed so that it never reads as at or under the limit: 3
    decimals, a 4th (the planner's grid is 0.0001, so exact) when 3 would round to `limit` or
    below it (0.2001 against 0.200 prints "0.2001", not "0.200")."""
    text = f"{mde:.3f}"
    if mde > limit + 1e-12 and float(text) <= limit + 1e-12:
        return f"{mde:.4f}"
    return text


def underpowered_message(plan: Plan) -> str:
    d = plan.design
    accept = fraction_text(plan.max_mde)
    if plan.pooled is not None:
        flagged = (
            "could not be flagged for any change"
            if d.mde is None
            else f"would be flagged for a change of {mde_above_text(d.mde, plan.max_mde)}"
        )
        return (
            f"underpowered benchmark: with {plan.pooled.cases:,} cases, one pooled group alone "
            f"{flagged} at its worst base rate, "
            f"{d.base_rate:.3f}, when a case's repeats always agree (within-case correlation 1), "
            f"and you accept {accept}"
        )
    if d.mde is None:
        return (
            "underpowered design: one condition alone could not be flagged for any change at its "
            f"worst base rate, {d.base_rate:.3f}, and you accept {accept}"
        )
    return (
        "underpowered design: one condition alone would be flagged for a change of "
        f"{mde_above_text(d.mde, plan.max_mde)} at its worst base rate, {d.base_rate:.3f}, "
        f"and you accept {accept}"
    )


def ways_out(plan: Plan) -> tuple[int, float | None]:
    """(replicates needed at --max-mde, the --max-mde this design would pass with); for a
    benchmark, the cases needed (more replicates do not move the figure checked)."""
    if plan.pooled is not None:
        return cases_needed(plan.pooled), suggested_max_mde(plan.design)
    needed = replicates_needed(len(plan.conditions), len(plan.failures), q=plan.q, max_mde=plan.max_mde)
    return needed, suggested_max_mde(plan.design)
