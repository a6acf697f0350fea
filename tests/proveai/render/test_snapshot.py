"""render/snapshot.py: how `proveai snapshot` reads, drawn on a Screen of two real text streams:
results on `out`, warnings, next: lines and progress on `err`. The results drawn are the
snapshot library's own, on traces captured in this process (tests/proveai/snapshot/store_kit.py);
on a real terminal: test_snapshot_terminal.py."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest

from proveai.diff.verdict import AgentVerdict, Grade, Status, Tier
from proveai.render.snapshot import (
    RunProgress,
    Screen,
    render_diff,
    render_init,
    render_list,
    render_show,
    render_update,
    render_verify,
    side_by_side_lines,
)
from proveai.snapshot.diffview import AgentDiff, DiffReport, FieldDiff, snapshot_diff
from proveai.snapshot.model import list_snapshots, short_hash
from proveai.snapshot.update import update_snapshot
from proveai.snapshot.verify import JudgeMetrics, VerifyOptions, verify_snapshot
from proveai.store import Store
from tests.proveai.snapshot.store_kit import capture, pin, quick_verify


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def screen(pretty: bool = False) -> Screen:
    return Screen(io.StringIO(), io.StringIO(), pretty=pretty)


def drawn(on: Screen) -> tuple[list[str], list[str]]:
    assert isinstance(on.out, io.StringIO) and isinstance(on.err, io.StringIO)
    return on.out.getvalue().splitlines(), on.err.getvalue().splitlines()


def test_init_says_what_it_wrote_or_that_it_already_pinned_it(store: Store) -> None:
    newest = capture(store)
    on = screen()
    render_init(pin(store), on)
    tail = f"4 agent(s) · quick-only · trace {newest.trace_id[:12]}…"
    assert drawn(on) == ([f"Wrote snapshot 'latest' v1 — {tail}"], [])
    on = screen()
    render_init(pin(store), on)
    assert drawn(on) == ([f"Snapshot 'latest' v1 already pins this — {tail}"], [])


def test_init_warns_on_stderr_about_an_agent_that_varied(store: Store) -> None:
    capture(store, tone="curt")
    capture(store)
    on = screen()
    result = pin(store)
    render_init(result, on)
    out, err = drawn(on)
    trace_id = result.snapshot.trace_id
    assert out == [f"Wrote snapshot 'latest' v1 — 4 agent(s) · quick-only · trace {trace_id[:12]}…"]
    assert err == [
        "warning: draft gave different outputs for the same input (a sampled model): a single-run verify "
        "cannot tell that noise from a regression",
        "next: proveai snapshot init latest --replicates 10",
    ]
    on = screen()  # a pinned distribution needs no next: line
    render_init(replace(result, snapshot=replace(result.snapshot, captures=result.snapshot.captures * 3)), on)
    out, err = drawn(on)
    assert "· 3 replicate(s) ·" in out[0] and len(err) == 1


def test_show_draws_the_invocation_and_one_row_per_agent(store: Store) -> None:
    capture(store)
    snap = pin(store).snapshot
    on = screen()
    render_show(snap, on)
    out, err = drawn(on)
    argv = " ".join((snap.invocation or {})["argv"])
    assert out[:2] == [
        f"Snapshot 'latest' v1 · trace {snap.trace_id[:12]}… · 1 capture(s)",
        f"Invocation: python {argv}  (cwd .)",
    ]
    assert out[2].split() == ["Agent", "Kind", "Model", "Parent", "Calls", "Prompt", "Output", "Source"]
    draft = snap.expected("draft")[0]
    assert out[4].split() == [
        "draft", "UNKNOWN", "m", "classify", "1", "—", short_hash(draft.output_hash),
        "tests/proveai/snapshot/store_kit.py",
    ]
    assert [line.split()[0] for line in out[3:]] == ["classify", "draft", "policy", "qa_check"] and err == []
    on = screen()
    render_show(replace(snap, invocation=None), on)
    assert drawn(on)[0][1] == "Invocation: none recorded (verify falls back to --quick)"


def test_list_names_every_snapshot_and_why_one_is_malformed(store: Store) -> None:
    on = screen()
    render_list([], store.snapshots_dir, on)
    assert drawn(on) == ([f"No snapshots in {store.snapshots_dir}", "next: proveai snapshot init"], [])
    capture(store)
    snap = pin(store).snapshot
    (store.snapshots_dir / "broken.json").write_text("{not json", encoding="utf-8")
    on = screen()
    render_list(list_snapshots(store.snapshots_dir), store.snapshots_dir, on)
    out, err = drawn(on)
    assert out[0].split() == ["Name", "Version", "Agents", "Captures", "Trace", "Status"]
    (broken,) = (entry for entry in list_snapshots(store.snapshots_dir) if entry.snapshot is None)
    assert out[1].split()[:5] == ["broken", "—", "—", "—", "—"]
    # on a pipe the last column is cut to 100 characters, ending in "…"
    status = out[1][out[1].index("malformed: "):]
    assert len(status) == 100 and status == f"malformed: {broken.problem}"[:99] + "…"
    assert out[2].split() == ["latest", "v1", "4", "1", f"{snap.trace_id[:12]}…", "quick-only"]
    assert err == []


def test_verify_draws_the_table_notes_and_summary_on_out_and_warns_on_err(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    capture(store, tone="curt")
    result = quick_verify(store, pinned.snapshot)
    on = screen()
    render_verify(result, on)
    out, err = drawn(on)
    assert out[0] == "Snapshot 'latest' v1"
    assert out[1].split() == ["Agent", "Verdict", "Change", "Rationale"]
    table = {line.split()[0]: line for line in out[2:6]}
    assert table["draft"].split()[:4] == ["draft", "?", "inconclusive", "downstream"]
    assert table["qa_check"].split()[:4] == ["qa_check", "~", "drifted", "downstream"]
    assert out[6:] == [
        f"note: {result.notes[0]}",
        f"snapshot 'latest' v1: 4 agent(s) — 2 unchanged, 1 inconclusive, 1 drifted · quick · run "
        f"{result.run_id} · not graded (hash-only mismatch)",
        f"Report: {result.run_dir / 'report.html'}",
    ]
    assert err == [
        "warning: drifted (not failing): qa_check",
        "warning: hash-only mode: 1 agent(s) changed and were not graded: draft",
    ]


def test_a_change_the_judge_could_not_grade_is_loud_and_says_why(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    capture(store, tone="curt")
    # no judge model is reachable (no key): the change is not graded
    for strict, tail in ((False, "; --strict-judge makes this exit 3"), (True, "")):
        result = verify_snapshot(
            pinned.snapshot, snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir,
            traces_dir=store.traces_dir, options=VerifyOptions(quick=True, strict_judge=strict),
        )
        on = screen()
        render_verify(result, on)
        out, err = drawn(on)
        assert err[1:] == [
            f"warning: 1 agent(s) changed but the judge could not grade them: draft. This run did NOT check "
            f"them{tail}",
            f"next: the judge is unreachable ({result.metrics.judge_unfit}); check its endpoint and key",
        ]
        assert not any(line.startswith(("warning:", "next:")) for line in out)

    unfit = replace(result, metrics=replace(result.metrics, judge_unreachable=False))
    on = screen()
    render_verify(unfit, on)
    assert drawn(on)[1][-1] == (
        f"next: the judge failed its known-pair check ({result.metrics.judge_unfit}); pass a stronger "
        "model with --judge-model"
    )


def test_sampling_noise_and_the_judges_cost_are_said_on_err(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    result = quick_verify(store, pinned.snapshot)
    noisy = AgentVerdict(
        "draft", Grade(Status.INCONCLUSIVE, Tier.JUDGE, "outputs vary", judged=False, sampling_noise=True)
    )
    judged = replace(
        result,
        verdicts=(noisy,),
        metrics=replace(
            result.metrics, judge_model="gpt-4o-mini", judge=JudgeMetrics(3, 1, seconds=1.26, max_tokens=64)
        ),
    )
    on = screen()
    render_verify(judged, on)
    assert drawn(on)[1] == [
        "warning: the outputs of draft vary from run to run (sampled model, same input, unchanged agent): "
        "one run cannot call that a regression",
        "next: proveai snapshot init latest --replicates 10, then verify with --replicates 10",
        "judge: 3 live call(s), 1 malformed repl(ies), 1.3 s (max_tokens 64)",
    ]


def test_judge_text_in_a_drawn_table_is_never_markup(store: Store) -> None:
    capture(store)
    result = quick_verify(store, pin(store).snapshot)
    marked = AgentVerdict("draft", Grade(Status.REGRESSED, Tier.JUDGE, "[bold]lost[/] the [1, 2] list"))
    on = screen(pretty=True)
    render_verify(replace(result, verdicts=(marked,)), on)
    out, _ = drawn(on)
    assert any("┃" in line for line in out)  # drawn by rich
    assert any("[bold]lost[/] the [1, 2] list" in line for line in out)


def test_update_says_which_version_it_accepted_from_which_run(store: Store) -> None:
    capture(store, qa_loops=2)
    pinned = pin(store)
    capture(store, tone="curt")
    verified = quick_verify(store, pinned.snapshot)
    result = update_snapshot(snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, agents=["draft"])
    on = screen()
    render_update(result, ["draft"], on)
    assert drawn(on) == (
        [f"Updated snapshot 'latest' v1 → v2 — accepted draft from run {verified.run_id}"], []
    )
    on = screen()
    render_update(result, [], on)
    assert drawn(on)[0] == [
        f"Updated snapshot 'latest' v1 → v2 — accepted every agent from run {verified.run_id}"
    ]


def test_diff_draws_each_changed_field_and_everything_on_request(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    capture(store, tone="curt")
    verified = quick_verify(store, pinned.snapshot)
    report = snapshot_diff(snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir)
    on = screen()
    render_diff(report, on)
    out, err = drawn(on)
    assert out == [
        f"Snapshot 'latest' v1 vs run {verified.run_id}",
        "== draft (call 1)",
        "--- pinned/output",
        "+++ fresh/output",
        "@@ -1 +1 @@",
        "-A polite reply about refund, within 30 days.",
        "+A curt reply about refund, within 30 days.",
        "== qa_check (call 1)",
        "--- pinned/inputs",
        "+++ fresh/inputs",
        "@@ -1,3 +1,3 @@",
        " {",
        '-  "reply": "A polite reply about refund, within 30 days."',
        '+  "reply": "A curt reply about refund, within 30 days."',
        " }",
    ]
    assert err == []
    on = screen()
    render_diff(report, on, everything=True)
    out, _ = drawn(on)
    assert "== classify (call 1)" in out and "--- prompt: unchanged" in out
    assert out.count("--- tool_calls: unchanged") == 4


def test_a_diff_with_no_change_says_so(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    capture(store)  # the same run again: a fresh capture, identical
    quick_verify(store, pinned.snapshot)
    report = snapshot_diff(snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir)
    on = screen()
    render_diff(report, on)
    assert drawn(on)[0][1:] == ["No differences: every agent matches the snapshot."]


def test_side_by_side_marks_each_changed_line_between_the_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    field = FieldDiff("output", "same\nold line", "same\nnew line\nadded")
    assert side_by_side_lines(field, 10) == [
        "--- output",
        "pinned     | fresh",
        "same       | same",
        "old line   * new line",
        "           * added",
    ]
    assert side_by_side_lines(FieldDiff("x", "a" * 30, "a" * 30), 8)[2] == "aaaaaaaa | aaaaaaaa"
    monkeypatch.setenv("COLUMNS", "63")  # (63 - 3) // 2 = 30 characters a side
    report = DiffReport("latest", 2, "verify-1", (AgentDiff("draft", 0, (field,)),))
    on = screen()
    render_diff(report, on, side_by_side=True)
    assert drawn(on)[0] == [
        "Snapshot 'latest' v2 vs run verify-1",
        "== draft (call 1)",
        *side_by_side_lines(field, 30),
    ]


def test_rerun_progress_is_one_line_per_run_on_err() -> None:
    on = screen()
    progress = RunProgress(on, "verify 'latest'")
    for done in range(4):
        progress(done, 3)
    assert drawn(on) == (
        [],
        [
            "verify 'latest': pipeline run 1 of 3",
            "verify 'latest': pipeline run 2 of 3",
            "verify 'latest': pipeline run 3 of 3",
        ],
    )
    assert progress.reporter is None  # closed when every run is done
