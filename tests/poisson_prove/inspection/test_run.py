"""inspect's library and text: errors by kind, coverage, one episode with meta and spans."""

from __future__ import annotations

from pathlib import Path

import pytest

from poisson_prove import ProveError
from poisson_prove.inspection.run import find_episode, inspect_run
from poisson_prove.render.inspection import episode_text, inspection_text
from tests.poisson_prove.runs import Episodes, write_run


def _run(store: Path):
    episodes = Episodes()
    for ticket in ("refund", "password", "shipping", "billing"):
        for temperature in (0.0, 0.7):
            cfg = {"ticket": ticket, "temperature": temperature}
            for r in range(10):
                if r == 3:
                    episodes.add(cfg, r, None, None, None, case_id=ticket, error_kind="ConnectionError",
                                 error_message=f"tool API down ({ticket})")
                elif r == 4 and ticket == "refund":
                    episodes.add(cfg, r, None, None, None, case_id=ticket, error_kind="episode_timeout",
                                 error_message="ran past --episode-timeout 30s")
                else:
                    spans = [{"name": "tool.lookup", "status": "ok"}, {"name": "llm.chat", "tokens": 41}]
                    episodes.add(cfg, r, "resolved" if r % 2 else "unresolved", r + 1.0, 20.0,
                                 case_id=ticket, meta={"case_id": ticket, "steps": r + 1}, spans=spans)
    return write_run(store, episodes)


def test_errors_by_kind_and_coverage(tmp_path: Path) -> None:
    info = _run(tmp_path)
    result = inspect_run(info.name, store=tmp_path)
    assert (result.episodes, result.without_outcome) == (80, 10)
    assert dict(result.outcomes) == {"resolved": 32, "unresolved": 38, "timeout": 0}
    first, second = result.errors
    assert (first.kind, first.count, first.share) == ("ConnectionError", 8, 0.1)
    assert first.messages == tuple(f"tool API down ({t})" for t in ("refund", "password", "shipping"))
    assert len(first.conditions) == 8 and first.conditions[0] == "ticket refund · temperature 0.0"
    assert (second.kind, second.count, second.conditions) == (
        "episode_timeout", 2, ("ticket refund · temperature 0.0", "ticket refund · temperature 0.7"),
    )
    assert [(c.label, c.without_outcome, c.episodes) for c in result.coverage][:2] == [
        ("ticket refund · temperature 0.0", 2, 10),
        ("ticket refund · temperature 0.7", 2, 10),
    ]
    text = inspection_text(result)
    assert (
        "ConnectionError      8  10.0%  ticket refund · temperature 0.0; ticket refund · temperature 0.7; "
        "ticket password · temperature 0.0; +5 more  tool API down (refund) | "
    ) in text


def test_one_episode_in_full_with_meta_and_spans(tmp_path: Path) -> None:
    info = _run(tmp_path)
    detail = find_episode(info.run_id, "ticket=shipping,temperature=0.70/5", store=tmp_path)
    assert detail.condition == "ticket shipping · temperature 0.7"
    assert (detail.outcome, detail.t, detail.horizon, detail.case_id) == ("resolved", 6.0, 20.0, "shipping")
    assert detail.meta == {"case_id": "shipping", "steps": 6}
    assert detail.spans[1] == {"name": "llm.chat", "tokens": 41}
    text = episode_text(detail)
    assert "meta        {\"case_id\": \"shipping\", \"steps\": 6}\n" in text
    assert text.endswith('spans 2\n  tool.lookup {"status": "ok"}\n  llm.chat {"tokens": 41}\n')
    errored = find_episode(info.name, "ticket refund · temperature 0.7/4", store=tmp_path)
    assert errored.outcome is None and errored.error_kind == "episode_timeout"
    assert "error       episode_timeout: ran past --episode-timeout 30s\n" in episode_text(errored)


def test_ambiguous_or_unknown_conditions_are_refused(tmp_path: Path) -> None:
    info = _run(tmp_path)
    with pytest.raises(ProveError, match='no condition "ticket=refund"'):
        find_episode(info.name, "ticket=refund/0", store=tmp_path)  # two temperatures match
    with pytest.raises(ProveError, match="no replicate 10 in condition") as raised:
        find_episode(info.name, "ticket=refund,temperature=0/10", store=tmp_path)
    assert "(stored replicates: 0..9)" in raised.value.message
