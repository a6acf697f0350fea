"""The plan names its own episodes: each condition's replicates on the seeds its salt gives, in
the order a sweep runs them, without the stored ones, at most a limit of them."""

from __future__ import annotations

from pathlib import Path

from poisson_prove.design.plan import Plan, make_plan
from poisson_prove.design.seeding import episode_seed
from poisson_prove.design.spec import load_spec
from tests.poisson_prove.helpers import small_spec

SALT = "00112233445566778899aabbccddeeff"


def _plan(tmp_path: Path, replicates: int, values: list[str]) -> Plan:
    spec = load_spec(small_spec(tmp_path, replicates=replicates, values=values))
    return make_plan(spec, salt=SALT, max_mde=1.0)


def test_the_plan_carries_its_salt_and_names_its_seeds(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 3, ["a", "b"])
    assert plan.salt == SALT
    a, b = (c.key for c in plan.conditions)
    assert plan.seeds(a, range(3)) == [episode_seed(SALT, a, r) for r in range(3)]
    episodes = list(plan.episodes())
    # replicate by replicate across the conditions, each on its own seed
    assert [(key, replicate) for key, _, replicate, _ in episodes] == [
        (a, 0), (b, 0), (a, 1), (b, 1), (a, 2), (b, 2)
    ]
    assert all(seed == episode_seed(SALT, key, r) for key, _, r, seed in episodes)
    assert [dict(cfg) for _, cfg, _, _ in episodes[:2]] == [{"x": "a"}, {"x": "b"}]
    tasks = list(plan.tasks())
    assert [(t.condition, dict(t.cfg), t.replicate, t.seed) for t in tasks] == [
        (key, dict(cfg), r, seed) for key, cfg, r, seed in episodes
    ]


def test_stored_episodes_are_skipped_and_a_limit_stops_the_stream(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 3, ["a", "b"])
    a, b = (c.key for c in plan.conditions)
    left = [(key, r) for key, _, r, _ in plan.episodes({(a, 0), (b, 1)})]
    assert left == [(b, 0), (a, 1), (a, 2), (b, 2)]
    assert [(key, r) for key, _, r, _ in plan.episodes({(a, 0)}, limit=2)] == [(b, 0), (a, 1)]
    assert list(plan.tasks(limit=0)) == []


def test_seeds_across_the_block_boundary_are_each_replicates_own(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 5000, ["a"])  # more replicates than one block of derived seeds
    (key,) = (c.key for c in plan.conditions)
    episodes = list(plan.episodes())
    assert [r for _, _, r, _ in episodes] == list(range(5000))
    for _, _, r, seed in (episodes[0], episodes[4095], episodes[4096], episodes[-1]):
        assert seed == episode_seed(SALT, key, r)


BENCHMARK = """
target = "agent:rollout"
target_id = "bench"
replicates = 3

[axes.ticket]
type = "categorical"
cases = true
values = ["t1", 7, "t3"]

[axes.model]
type = "categorical"
values = ["a", "b"]

[declare]
outcomes = ["ok", "bad"]
failures = ["bad"]
"""


def test_a_benchmark_is_planned_by_its_cases(tmp_path: Path) -> None:
    (tmp_path / "prove.toml").write_text(BENCHMARK)
    spec = load_spec(tmp_path / "prove.toml")
    assert spec.case_axis == "ticket"
    plan = make_plan(spec, salt=SALT, max_mde=1.0)
    assert plan.pooled is not None and plan.rollouts == 18
    assert (plan.pooled.cases, plan.pooled.groups, plan.pooled.replicates) == (3, 2, 3)
    assert plan.design is plan.pooled.agreeing  # --max-mde is checked at correlation 1
    assert plan.design.replicates == 3 and plan.pooled.independent.replicates == 9  # n = K, n = K m
    case_ids = plan.case_ids()
    assert case_ids is not None
    assert sorted(set(case_ids.values())) == ["7", "t1", "t3"]  # an integer id as its text
    assert all(case_ids[c.key] == str(c.cfg["ticket"]) for c in plan.conditions)
    block = plan.design_dict()
    assert block["benchmark"]["correlation_1"]["n"] == 3 and block["tests"] == 2


def test_a_spec_without_a_case_axis_plans_as_before(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 194, ["a", "b"])
    assert plan.pooled is None and plan.case_ids() is None
    assert sorted(plan.design_dict()) == [
        "alpha", "approximate", "base_rate", "direction", "max_mde", "mde", "passes", "q", "tests"
    ]
