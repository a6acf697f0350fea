"""compare()'s rules: verdict words, events, coverage, warnings and every refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

import poisson_prove
from poisson_prove import ProveError
from poisson_prove.comparison import default_runs
from tests.poisson_prove.runs import Episodes, from_outcomes, write_run

N = 200


def _outcomes(**counts: int) -> list[str | None]:
    """A list of N outcomes in blocks: _outcomes(unresolved=80, timeout=10) + resolved."""
    out: list[str | None] = []
    for name, count in counts.items():
        out += [None if name == "error" else name] * count
    return out + ["resolved"] * (N - len(out))


def _pair(store: Path, before: dict, after: dict, **kwargs) -> tuple:
    a = write_run(store, from_outcomes(before))
    b = write_run(store, from_outcomes(after, **kwargs), paired_with=a)
    return a, b


def test_trade_worse_and_safer_conditions_and_headline(tmp_path: Path) -> None:
    before = {
        ("refund", 0.0): _outcomes(unresolved=80),
        ("refund", 0.7): _outcomes(unresolved=20),
        ("password", 0.0): _outcomes(unresolved=60, timeout=5),
    }
    after = {
        ("refund", 0.0): _outcomes(unresolved=10, timeout=70),  # unresolved fell, timeout rose
        ("refund", 0.7): _outcomes(unresolved=70),  # worse
        ("password", 0.0): _outcomes(unresolved=10, timeout=5),  # safer
    }
    a, b = _pair(tmp_path, before, after)
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path)
    verdicts = {c.label: c.verdict for c in comparison.conditions}
    assert verdicts == {
        "ticket refund · temperature 0.0": "trade",
        "ticket refund · temperature 0.7": "worse",
        "ticket password · temperature 0.0": "safer",
    }
    trade = comparison.conditions[0]
    assert (trade.fell, trade.rose) == (("unresolved",), ("timeout",))
    assert comparison.headline.word == "trade"
    counts = {c.outcome: (c.safer, c.worse) for c in comparison.headline.counts}
    assert counts == {"unresolved": (2, 1), "timeout": (0, 1)}
    assert comparison.any_worse
    # a rise of one row in a condition with a fall elsewhere is the docs' trade line
    from poisson_prove.render.text import plain_report

    text = plain_report(comparison)
    assert "trade ticket refund · temperature 0.0: unresolved fell, timeout rose\n" in text
    assert text.startswith(
        "trade unresolved: 2 safer, 1 worse · timeout: 0 safer, 1 worse (paired test on shared seeds); "
    )


def test_no_change_is_said_with_the_smallest_change(tmp_path: Path) -> None:
    same = {("refund", 0.0): _outcomes(unresolved=40, timeout=4)}
    a, b = _pair(tmp_path, same, same)
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path)
    assert comparison.headline.word == "no change"
    row = comparison.conditions[0].outcomes[0]
    assert (row.b, row.c, row.p, row.verdict) == (0, 0, 1.0, "no change")
    assert row.mde_rise is not None and 0 < row.mde_rise < 1
    assert row.mde_fall is not None and 0 < row.mde_fall <= 0.2
    assert not comparison.any_worse


def test_episode_timeout_event_counts_the_stopped_episodes(tmp_path: Path) -> None:
    before, after = Episodes(), Episodes()
    cfg = {"ticket": "refund", "temperature": 0.0}
    for r in range(N):
        before.add(cfg, r, "resolved", case_id="refund")
        if r < 60:
            after.add(cfg, r, None, None, None, case_id="refund", error_kind="episode_timeout",
                      error_message="ran past --episode-timeout 30s")
        else:
            after.add(cfg, r, "resolved", case_id="refund")
    a = write_run(tmp_path, before)
    b = write_run(tmp_path, after, paired_with=a)
    plain = poisson_prove.compare(a.name, b.name, store=tmp_path)
    assert plain.outcomes == ("unresolved", "timeout")
    assert plain.conditions[0].outcomes[0].after.n == N - 60  # errors are left out of every rate
    assert plain.coverage[0].after_without == 60 and plain.coverage[0].differs
    assert any("may differ for that reason" in w for w in plain.warnings)
    for event in ("episode_timeout", "timeout"):
        # the agent declares a `timeout` outcome, so only episode_timeout names the errors
        if event == "timeout":
            continue
        comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, event=event)
        row = comparison.conditions[0].outcomes[0]
        assert comparison.outcomes == ("episode_timeout",)
        assert (row.after.k, row.after.n, row.c, row.b) == (60, N, 60, 0)
        assert row.verdict == "rose" and comparison.conditions[0].verdict == "worse"


def test_timeout_event_means_episode_timeout_when_no_timeout_outcome(tmp_path: Path) -> None:
    before, after = Episodes(), Episodes()
    cfg = {"ticket": "refund", "temperature": 0.0}
    for r in range(50):
        before.add(cfg, r, "resolved", case_id="refund")
        after.add(cfg, r, None, None, None, case_id="refund", error_kind="episode_timeout", error_message="x")
    kwargs = {"outcomes": ("resolved", "unresolved"), "failures": ("unresolved",)}
    a = write_run(tmp_path, before, **kwargs)
    b = write_run(tmp_path, after, paired_with=a, **kwargs)
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, event="timeout")
    assert comparison.outcomes == ("episode_timeout",)
    assert comparison.conditions[0].outcomes[0].c == 50


def test_unknown_event_lists_the_declared_ones(tmp_path: Path) -> None:
    a, b = _pair(tmp_path, {("refund", 0.0): _outcomes()}, {("refund", 0.0): _outcomes()})
    with pytest.raises(ProveError) as raised:
        poisson_prove.compare(a.name, b.name, store=tmp_path, event="timout")
    assert 'unknown event "timout" (did you mean "timeout"?)' in raised.value.message
    assert "resolved, unresolved, timeout" in raised.value.message
    assert raised.value.exit_code == 1 and raised.value.suggestions


def test_a_condition_running_several_cases_is_refused(tmp_path: Path) -> None:
    mixed = Episodes()
    names = ["password", "refund", "shipping"]
    for temperature in (0.0, 0.7):
        for r in range(30):
            mixed.add({"temperature": temperature}, r, "resolved", case_id=names[r % 3])
    a = write_run(tmp_path, mixed, axes=("temperature",))
    b = write_run(tmp_path, mixed, axes=("temperature",), paired_with=a)
    with pytest.raises(ProveError) as raised:
        poisson_prove.compare(a.name, b.name, store=tmp_path)
    assert raised.value.message == (
        "condition temperature 0.0 ran 3 cases (password, refund, shipping); "
        "each case must be its own sweep axis"
    )
    assert raised.value.suggestions == (
        "make each case its own sweep axis in the spec, an [axes.<name>] table whose values are the "
        "cases, then sweep again",
    )
    assert raised.value.exit_code == 1


def test_episodes_without_case_id_are_not_counted_as_cases(tmp_path: Path) -> None:
    per_cell = {("refund", 0.0): _outcomes(unresolved=20)}
    a = write_run(tmp_path, from_outcomes(per_cell, case_ids=False))
    b = write_run(tmp_path, from_outcomes(per_cell, case_ids=False), paired_with=a)
    assert poisson_prove.compare(a.name, b.name, store=tmp_path).headline.word == "no change"


def test_refusals(tmp_path: Path) -> None:
    per_cell = {("refund", 0.0): _outcomes(unresolved=20)}
    with pytest.raises(ProveError, match="holds 0 runs; a comparison needs two"):
        default_runs(store=tmp_path)
    a = write_run(tmp_path, from_outcomes(per_cell))
    with pytest.raises(ProveError, match=r'holds 1 run \("support-bot .* a"\); a comparison needs two'):
        default_runs(store=tmp_path)
    with pytest.raises(ProveError, match="needs two different runs"):
        poisson_prove.compare(a.name, a.run_id, store=tmp_path)
    with pytest.raises(ProveError, match='no run named "nope"'):
        poisson_prove.compare(a.name, "nope", store=tmp_path)
    other = write_run(tmp_path, from_outcomes(per_cell), outcomes=("resolved", "unresolved", "refused"),
                      failures=("unresolved", "refused"))
    with pytest.raises(ProveError, match="declare different outcomes"):
        poisson_prove.compare(a.name, other.name, store=tmp_path)
    empty = write_run(tmp_path, Episodes())
    with pytest.raises(ProveError, match="has no episodes"):
        poisson_prove.compare(a.name, empty.name, store=tmp_path)
    all_errors = write_run(tmp_path, from_outcomes({("refund", 0.0): [None] * 5}))
    with pytest.raises(ProveError, match="has no episode with an outcome"):
        poisson_prove.compare(a.name, all_errors.name, store=tmp_path)
    with pytest.raises(ProveError, match="--q must be between 0 and 1"):
        poisson_prove.compare(a.name, other.name, store=tmp_path, q=1.5)


def test_default_runs_prefer_the_pair_of_the_latest(tmp_path: Path) -> None:
    per_cell = {("refund", 0.0): _outcomes(unresolved=20)}
    first = write_run(tmp_path, from_outcomes(per_cell))
    second = write_run(tmp_path, from_outcomes(per_cell))
    third = write_run(tmp_path, from_outcomes(per_cell), paired_with=first)
    before, after = default_runs(store=tmp_path)
    assert (before.run_id, after.run_id) == (first.run_id, third.run_id)
    before, after = default_runs(second.name, store=tmp_path)
    assert (before.run_id, after.run_id) == (second.run_id, third.run_id)


def test_warnings_for_missing_conditions_and_partial_runs(tmp_path: Path) -> None:
    before = {("refund", 0.0): _outcomes(unresolved=20), ("password", 0.0): _outcomes()}
    after = {("refund", 0.0): _outcomes(unresolved=20), ("shipping", 0.0): _outcomes()}
    a = write_run(tmp_path, from_outcomes(before))
    b = write_run(tmp_path, from_outcomes(after), paired_with=a, status="partial", planned=600,
                  resumed_at=["2026-10-26T11:00:00Z"])
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path)
    assert [c.label for c in comparison.conditions] == ["ticket refund · temperature 0.0"]
    assert comparison.only_before == ("ticket password · temperature 0.0",)
    assert comparison.only_after == ("ticket shipping · temperature 0.0",)
    text = "\n".join(comparison.warnings)
    assert f'condition ticket password · temperature 0.0 ran only in "{a.name}"' in text
    assert f'run "{b.name}" is partial: 400 of 600 planned episodes (resumed, not finished)' in text


def test_success_event_rising_reads_safer(tmp_path: Path) -> None:
    a, b = _pair(
        tmp_path,
        {("refund", 0.0): _outcomes(unresolved=100)},
        {("refund", 0.0): _outcomes(unresolved=10)},
    )
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, event="resolved")
    row = comparison.conditions[0].outcomes[0]
    assert (row.outcome, row.verdict) == ("resolved", "rose")
    assert comparison.conditions[0].verdict == "safer" and comparison.headline.word == "safer"


def test_logrank_rows_say_when_a_competing_outcome_moved(tmp_path: Path) -> None:
    a, b = _pair(
        tmp_path,
        {("refund", 0.0): _outcomes(unresolved=80), ("password", 0.0): _outcomes(unresolved=20)},
        {("refund", 0.0): _outcomes(unresolved=10, timeout=70), ("password", 0.0): _outcomes(unresolved=20)},
    )
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, method="logrank_bh")
    trade, calm = comparison.conditions
    assert trade.verdict == "trade" and calm.verdict == "no change"
    unresolved, timeout = trade.outcomes
    assert unresolved.note.startswith("timeout also moved here; the log-rank test compares hazards")
    assert timeout.note.startswith("unresolved also moved here")
    assert all(row.note is None for row in calm.outcomes)
    assert unresolved.statistic > 0 and unresolved.b is None
    assert sum("also moved here" in w for w in comparison.warnings) == 2
    from poisson_prove.render.text import method_line, plain_report

    assert method_line(comparison) == (
        "method cause-specific log-rank test and McNemar on the rates (logrank_bh), chosen with --method; "
        "McNemar, the default for runs paired at sweep time, gates too: a row rose or fell when either "
        "test says so"
    )
    assert " chi2 " in plain_report(comparison)


def test_a_logrank_row_no_episode_reached_in_either_run_gets_no_competing_note(tmp_path: Path) -> None:
    declared = {
        "outcomes": ("resolved", "unresolved", "timeout", "refused"),
        "failures": ("unresolved", "timeout", "refused"),
    }
    a = write_run(tmp_path, from_outcomes({("refund", 0.0): _outcomes(unresolved=80)}), **declared)
    b = write_run(
        tmp_path,
        from_outcomes({("refund", 0.0): _outcomes(unresolved=10, timeout=70)}),
        paired_with=a,
        **declared,
    )
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, method="logrank_bh")
    rows = {row.outcome: row for row in comparison.conditions[0].outcomes}
    assert rows["refused"].before.k == rows["refused"].after.k == 0
    assert rows["refused"].note is None  # 0 -> 0: nothing for a competing ending to explain
    assert rows["unresolved"].note is not None and rows["timeout"].note is not None
    noted = [w for w in comparison.warnings if "also moved here" in w]
    assert len(noted) == 2 and not [w for w in noted if "refused:" in w], noted
