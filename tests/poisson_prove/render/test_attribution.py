"""The where block and the side-by-side view as text: a named agent with its counts and its
checks that moved, a row that names nobody with its reason, nothing for runs without agents."""

from __future__ import annotations

from poisson_prove.comparison.attribution import (
    AgentCall,
    AgentCount,
    Attribution,
    CheckComparison,
    RowAttribution,
)
from poisson_prove.comparison.twins import PairView, side_by_side
from poisson_prove.render.attribution import pair_lines, where_lines, where_text

CHECK = CheckComparison("draft", "json_valid", "mcnemar", 194, 0.03, 0.15, 1, 24, 1e-5, 0.002)
NAMED = RowAttribution(
    "k", "ticket refund", "malformed", "rose", 45, 149, 45, 149,
    (AgentCount("draft", 41, 3, ("prompt",)), AgentCount("classify", 2, 1, ())), "draft", None, (CHECK,),
)
NOBODY = RowAttribution("k2", "ticket login", "malformed", "rose", 2_000, 9_000, 1_000, 1_000, (), None,
                        "the model samples", ())


def test_the_where_block() -> None:
    lines = where_lines(Attribution(True, None, (NAMED, NOBODY), 1), 0.05)
    assert lines[1] == (
        "  ticket refund malformed rose: draft 41/45 flipped pairs vs 3/149 unflipped (changed: prompt); "
        "classify 2/45 flipped pairs vs 1/149 unflipped"
    )
    assert lines[2] == "    draft json_valid 0.030 -> 0.150 over 194 pairs, q 0.002"
    assert lines[3] == (
        "  ticket login malformed rose: no agent is named (1,000 read of 2,000 flipped pairs vs 1,000 read "
        "of 9,000 unflipped): the model samples"
    )
    assert where_text(Attribution(False, "none", code="no_agent_spans"), 0.05) == ""
    assert where_lines(Attribution(False, "not paired", code="unpaired"), 0.05) == [
        "where: no agent is named: not paired"
    ]


def test_the_pair_side_by_side() -> None:
    before = (AgentCall("classify", 0, "sha256:aaaa", "ok"), AgentCall("draft", 0, "sha256:bbbb", "ok"))
    after = (AgentCall("classify", 0, "sha256:aaaa", "ok"), AgentCall("draft", 0, "sha256:cccc", "ok"))
    lines = tuple(side_by_side(before, after, "draft"))
    view = PairView("ticket refund", "k", 3, 42, "sent", "malformed", lines, "draft")
    lines = pair_lines(view, "a", "b")
    assert lines[0] == "pair ticket refund/3 (seed 42): a sent · b malformed"
    assert lines[2].split() == ["classify", "out", "aaaa", "=", "classify", "out", "aaaa"]
    assert lines[3].endswith("<- first divergence") and "≠ draft out cccc" in lines[3]
