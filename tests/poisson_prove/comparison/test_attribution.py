"""The attribution's pure part: agent calls matched by agent and occurrence, the first
divergence in call order, who is named (or why nobody is), and the agents' checks compared
paired (McNemar, checked against statsmodels; the sign-flip over cases) with their own BH."""

from __future__ import annotations

import numpy as np
from scipy.stats import binom
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from poisson_prove.comparison.attribution import (
    AgentCall,
    RowAttribution,
    adjust_checks,
    agent_calls,
    attribute_row,
    changed_between,
    compare_checks,
    first_divergence,
)
from poisson_prove.stats.clustered import sign_flip


def span(name: str, output: str | None, *, parent=None, status="ok", prompt="p", **checks: str) -> dict:
    attributes = {"gen_ai.agent.name": name, "proveai.prompt_hash": prompt, "proveai.code_hash": "c",
                  "proveai.model_hash": "m"}
    if output is not None:
        attributes["proveai.output_hash"] = output
    attributes.update({f"proveai.check.{k}": v for k, v in checks.items()})
    return {"name": name, "source": "monitor", "status": status, "parent": parent, "attributes": attributes}


def calls(*entries: dict) -> tuple[AgentCall, ...]:
    return agent_calls(list(entries))


def test_calls_in_call_order_with_occurrences_depths_and_checks() -> None:
    step = {"name": "turn", "source": "step", "parent": None, "attributes": {}}
    parsed = agent_calls([step, span("a", "1", parent=0), span("b", "2", parent=1, json_valid="bad"),
                          span("a", "3"), {"source": "otel", "name": "GET", "attributes": {}}])
    assert [(c.agent, c.occurrence, c.depth) for c in parsed] == [("a", 0, 1), ("b", 0, 2), ("a", 1, 0)]
    assert parsed[1].checks == {"json_valid": "bad"} and parsed[0].hashes["prompt"] == "p"
    assert agent_calls(None) == () and agent_calls(["junk", 3]) == ()


def test_the_first_divergence_walks_call_order() -> None:
    same = calls(span("classify", "x"), span("draft", "y"), span("qa", "z"))
    assert first_divergence(same, same) is None
    draft_moved = calls(span("classify", "x"), span("draft", "Y"), span("qa", "Z"))
    assert first_divergence(same, draft_moved) == "draft"  # qa differs too, but later
    assert first_divergence(same, calls(span("classify", "x"), span("draft", "y"))) == "qa"  # no twin
    failed = calls(span("classify", "x"), span("draft", None, status="error"))
    assert first_divergence(same[:2], failed) == "draft"
    extra = calls(span("classify", "x"), span("draft", "y"), span("qa", "z"), span("draft", "w"))
    assert first_divergence(same, extra) == "draft"  # the after twin's second draft call has no twin


def pairs(n: int, before: tuple, after: tuple) -> list:
    return [(before, after)] * n


def test_named_when_most_flipped_pairs_diverge_there_beyond_the_noise_floor() -> None:
    base = calls(span("classify", "x"), span("draft", "y"))
    moved = calls(span("classify", "x"), span("draft", "Y"))
    noise = calls(span("classify", "X"), span("draft", "y"))
    row = attribute_row(
        key="k", label="l", outcome="bad", verdict="rose",
        flipped=pairs(41, base, moved) + pairs(4, base, base),
        unflipped=pairs(3, base, moved) + pairs(146, base, base) + pairs(2, base, noise),
        flipped_pairs=45, unflipped_pairs=151, changed={},
    )
    assert row.named == "draft" and row.reason is None
    assert [(a.agent, a.flipped, a.unflipped) for a in row.agents] == [("draft", 41, 3), ("classify", 0, 2)]


def test_divergence_everywhere_with_nothing_changed_names_no_agent() -> None:
    base = calls(span("classify", "x"), span("draft", "y"))
    sampled = calls(span("classify", "other"), span("draft", "z"))
    args = dict(key="k", label="l", outcome="bad", verdict="rose", flipped_pairs=20, unflipped_pairs=80)
    row = attribute_row(flipped=pairs(20, base, sampled), unflipped=pairs(80, base, sampled), changed={},
                        **args)
    assert row.named is None and "the model samples" in (row.reason or "")
    # the same counts when classify's prompt changed between the runs: the change is named
    changed = attribute_row(flipped=pairs(20, base, sampled), unflipped=pairs(80, base, sampled),
                            changed={"classify": ("prompt",)}, **args)
    assert changed.named == "classify"
    nowhere = attribute_row(flipped=pairs(20, base, base), unflipped=[], changed={}, **args)
    assert nowhere.named is None and "outside the monitored agents" in (nowhere.reason or "")


def test_changed_between_names_the_hashes_that_differ() -> None:
    before = [calls(span("classify", "x"), span("draft", "y"))]
    after = [calls(span("classify", "x"), span("draft", "y", prompt="q"))]
    assert changed_between(before, after) == {"classify": (), "draft": ("prompt",)}


def test_check_failure_rates_paired_match_statsmodels_and_the_sign_flip() -> None:
    rng = np.random.default_rng(7)
    before = (rng.random(400) < 0.05).astype(np.int8)
    after = (rng.random(400) < 0.15).astype(np.int8)
    after[:10] = -1  # no label on one side: left out of the pairs
    (result,) = compare_checks({("draft", "json_valid"): (before, after)})
    both = after >= 0
    b = int(((before == 1) & (after == 0) & both).sum())
    c = int(((after == 1) & (before == 0) & both).sum())
    table = [[0, b], [c, 0]]
    exact = sm_mcnemar(table, exact=True).pvalue
    assert (result.pairs, result.b, result.c, result.test) == (390, b, c, "mcnemar")
    assert abs(result.p - (exact - binom.pmf(min(b, c), b + c, 0.5))) < 1e-12  # mid-p
    case = np.arange(400) % 7
    (pooled,) = compare_checks({("draft", "json_valid"): (before, after)}, case=case)
    flip = sign_flip(np.bincount(case[both & (before == 1) & (after == 0)], minlength=7),
                     np.bincount(case[both & (after == 1) & (before == 0)], minlength=7))
    assert pooled.test == "sign_flip" and pooled.p == flip.p_mid


def test_checks_are_a_family_of_their_own_counting_each_condition_once() -> None:
    rng = np.random.default_rng(3)
    labels = {
        (a, "json_valid"): ((rng.random(200) < 0.1).astype(np.int8), (rng.random(200) < s).astype(np.int8))
        for a, s in (("draft", 0.3), ("qa", 0.1))
    }
    checks = tuple(compare_checks(labels))
    row = RowAttribution("k", "l", "bad", "rose", 1, 1, 1, 1, (), None, "r", checks)
    other = RowAttribution("k2", "l2", "bad", "rose", 1, 1, 1, 1, (), None, "r", checks[:1])
    twice = RowAttribution("k", "l", "worse", "rose", 1, 1, 1, 1, (), None, "r", checks)  # same condition
    adjusted, family = adjust_checks([row, other, twice])
    assert family == 3
    expected = multipletests([checks[0].p, checks[1].p, checks[0].p], method="fdr_bh")[1]
    assert [c.q_value for c in adjusted[0].checks] == [c.q_value for c in adjusted[2].checks]
    assert abs(adjusted[0].checks[0].q_value - expected[0]) < 1e-12
    assert abs(adjusted[1].checks[0].q_value - expected[2]) < 1e-12
