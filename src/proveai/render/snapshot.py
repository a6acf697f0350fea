"""How `proveai snapshot` draws its results: tables (Rich on a terminal, plain on a pipe), the
re-run progress, the verify summary, the warnings for changes nobody checked, and the diff.

Everything is drawn on the `Screen` the command gives: results on its `out`, warnings, notes
for the judge's cost and progress on its `err`.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from prove_common.progress import ProgressReporter, make_progress
from prove_common.tables import Column, Table, draw_table, rich_table, terminal_console
from proveai.diff.verdict import AgentVerdict, Status
from proveai.render.verify import (
    REPLICATE_HEADERS,
    VERDICT_HEADERS,
    replicate_rows,
    snapshot_table,
    summary_line,
    verdict_cells,
)
from proveai.snapshot.diffview import DiffReport, FieldDiff
from proveai.snapshot.init import InitResult
from proveai.snapshot.model import Snapshot, SnapshotEntry, short_hash
from proveai.snapshot.update import UpdateResult
from proveai.snapshot.verify import GateVerdict, VerifyResult


@dataclass(frozen=True)
class Screen:
    """Where a command draws: `out` for its results, `err` for warnings and progress;
    `pretty` when `out` gets Rich tables (a terminal, no --plain), `pretty_err` when `err`
    gets a live progress bar."""

    out: IO[str]
    err: IO[str]
    pretty: bool = False
    pretty_err: bool = False

    def line(self, text: str) -> None:
        self.out.write(text + "\n")

    def warn(self, text: str) -> None:
        self.err.write(text + "\n")


def emit_table(screen: Screen, title: str | None, headers: Any, rows: Any) -> None:
    draw_table(snapshot_table(title, headers, rows), screen.out, pretty=screen.pretty)


class RunProgress:
    """Pipeline re-runs as they happen: a rich bar on a terminal, plain lines on a pipe.

    Written to stderr so stdout stays the result. Started at the first report, closed when
    every run is done.
    """

    def __init__(self, screen: Screen, label: str) -> None:
        self.label = label
        self.screen = screen
        self.reporter: ProgressReporter | None = None

    def _line(self, done: int, total: int, item: str) -> str | None:
        return f"{self.label}: pipeline run {done + 1} of {total}" if done < total else None

    def __call__(self, done: int, total: int) -> None:
        if self.reporter is None:
            self.reporter = make_progress(
                self.screen.err,
                pretty=self.screen.pretty_err,
                label=f"{self.label}: re-running the pipeline",
                line=self._line,
                every_tenth=False,
                rate=False,
            )
        self.reporter(done, total)
        if done >= total:
            self.reporter.close()
            self.reporter = None


def render_init(result: InitResult, screen: Screen) -> None:
    snap = result.snapshot
    extra = f" · {snap.replicates} replicate(s)" if snap.replicates > 1 else ""
    quick = " · quick-only" if snap.quick_only else ""
    tail = f"{len(snap.agents)} agent(s){extra}{quick} · trace {snap.trace_id[:12]}…"
    if result.unchanged:
        screen.line(f"Snapshot '{snap.name}' v{snap.version} already pins this — {tail}")
    else:
        screen.line(f"Wrote snapshot '{snap.name}' v{snap.version} — {tail}")
    if result.varying:
        screen.warn(
            f"warning: {', '.join(result.varying)} gave different outputs for the same input "
            "(a sampled model): a single-run verify cannot tell that noise from a regression"
        )
        if snap.replicates < 2:
            screen.warn(f"next: proveai snapshot init {snap.name} --replicates 10")


def render_show(snap: Snapshot, screen: Screen) -> None:
    screen.line(
        f"Snapshot '{snap.name}' v{snap.version} · trace {snap.trace_id[:12]}… · {snap.replicates} capture(s)"
    )
    inv = snap.invocation
    if inv:
        command = " ".join(["python", *inv.get("argv", [])])
        screen.line(f"Invocation: {command}  (cwd {inv.get('cwd', '.')})")
    else:
        screen.line("Invocation: none recorded (verify falls back to --quick)")
    rows = []
    for name, agent in snap.agents.items():
        calls = snap.expected(name)
        rows.append(
            (
                name,
                agent.kind,
                agent.model or "—",
                agent.parent_agent or "—",
                str(len(calls)),
                short_hash(agent.prompt_hash) if agent.prompt is not None else "—",
                short_hash(calls[0].output_hash) if calls else "—",
                agent.source_file or "—",
            )
        )
    headers = ("Agent", "Kind", "Model", "Parent", "Calls", "Prompt", "Output", "Source")
    emit_table(screen, None, headers, rows)


def render_list(entries: Sequence[SnapshotEntry], snapshots_dir: Path, screen: Screen) -> None:
    if not entries:
        screen.line(f"No snapshots in {snapshots_dir}")
        screen.line("next: proveai snapshot init")
        return
    rows = []
    for entry in entries:
        snap = entry.snapshot
        if snap is None:
            rows.append((entry.name, "—", "—", "—", "—", f"malformed: {entry.problem}"))
        else:
            rows.append(
                (
                    entry.name,
                    f"v{snap.version}",
                    str(len(snap.agents)),
                    str(snap.replicates),
                    f"{snap.trace_id[:12]}…",
                    "quick-only" if snap.quick_only else "ok",
                )
            )
    emit_table(screen, None, ("Name", "Version", "Agents", "Captures", "Trace", "Status"), rows)


def render_verify(result: VerifyResult, screen: Screen) -> None:
    title = f"Snapshot '{result.snapshot.name}' v{result.snapshot.version}"
    emit_table(screen, title, VERDICT_HEADERS, verdict_cells(result))
    if result.replicate_verdicts:
        emit_table(
            screen,
            "Replicates (failing = regressed, missing or iteration count changed)",
            REPLICATE_HEADERS,
            replicate_rows(result),
        )
    for note in result.notes:
        screen.line(f"note: {note}")
    screen.line(summary_line(result))
    screen.line(f"Report: {result.run_dir / 'report.html'}")
    drifted = [v.agent for v in result.verdicts if v.status == Status.DRIFTED]
    if drifted:
        screen.warn(f"warning: drifted (not failing): {', '.join(drifted)}")
    unjudged = result.unjudged
    if unjudged:
        warn_unjudged(result, unjudged, screen)
    judge = result.metrics.judge
    if judge.calls or judge.malformed:
        screen.warn(
            f"judge: {judge.calls} live call(s), {judge.malformed} malformed repl(ies), "
            f"{judge.seconds:.1f} s (max_tokens {judge.max_tokens})"
        )


def warn_unjudged(result: VerifyResult, unjudged: Sequence[AgentVerdict], screen: Screen) -> None:
    """The loud warning for changes nobody checked, with a next: line saying what is wrong."""
    names = ", ".join(v.agent for v in unjudged)
    if result.metrics.judge_model is None:
        screen.warn(f"warning: hash-only mode: {len(unjudged)} agent(s) changed and were not graded: {names}")
        return
    noisy = [v for v in unjudged if v.sampling_noise]
    judged = [v for v in unjudged if v not in noisy]
    if noisy:
        screen.warn(
            f"warning: the outputs of {', '.join(v.agent for v in noisy)} vary from run to run (sampled "
            "model, same input, unchanged agent): one run cannot call that a regression\n"
            f"next: proveai snapshot init {result.snapshot.name} --replicates 10, then verify with "
            "--replicates 10"
        )
    if not judged:
        return
    already_failing = result.gate in (GateVerdict.FAIL, GateVerdict.INCONCLUSIVE)
    tail = "" if already_failing else "; --strict-judge makes this exit 3"
    screen.warn(
        f"warning: {len(judged)} agent(s) changed but the judge could not grade them: "
        f"{', '.join(v.agent for v in judged)}. This run did NOT check them{tail}"
    )
    unfit = result.metrics.judge_unfit
    if unfit and result.metrics.judge_unreachable:
        screen.warn(f"next: the judge is unreachable ({unfit}); check its endpoint and key")
    elif unfit:
        screen.warn(
            f"next: the judge failed its known-pair check ({unfit}); pass a stronger model with "
            "--judge-model"
        )


def render_update(result: UpdateResult, agents: Sequence[str], screen: Screen) -> None:
    snap = result.snapshot
    which = "every agent" if not agents else ", ".join(result.agents)
    screen.line(
        f"Updated snapshot '{snap.name}' v{result.previous_version} → v{snap.version} — accepted {which} "
        f"from run {result.run_dir.name}"
    )


def render_diff(
    report: DiffReport, screen: Screen, *, side_by_side: bool = False, everything: bool = False
) -> None:
    """Each changed call's changed fields as unified diffs (or `side_by_side`); `everything`
    shows the unchanged ones too."""
    screen.line(f"Snapshot '{report.snapshot}' v{report.version} vs run {report.run_id}")
    shown = 0
    for agent_diff in report.agents:
        if not agent_diff.changed and not everything:
            continue
        shown += 1
        header = f"== {agent_diff.agent} (call {agent_diff.iteration + 1})"
        if agent_diff.note:
            header += f" — {agent_diff.note}"
        screen.line(header)
        for field in agent_diff.fields:
            if not field.changed and not everything:
                continue
            if side_by_side:
                _side_by_side(field, screen)
            else:
                screen.line(field.unified or f"--- {field.field}: unchanged")
    if shown == 0:
        screen.line("No differences: every agent matches the snapshot.")


def side_by_side_lines(field: FieldDiff, width: int) -> list[str]:
    """Plain two-column text of one field: `*` between the columns marks a changed line."""
    left, right = field.pinned.splitlines() or [""], field.fresh.splitlines() or [""]
    lines = [f"--- {field.field}", f"{'pinned'.ljust(width)} | fresh"]
    for index in range(max(len(left), len(right))):
        a = left[index] if index < len(left) else ""
        b = right[index] if index < len(right) else ""
        mark = "|" if a == b else "*"
        lines.append(f"{a[:width].ljust(width)} {mark} {b[:width]}")
    return lines


def _side_by_side(field: FieldDiff, screen: Screen) -> None:
    if screen.pretty:
        console = terminal_console(screen.out)
        columns = {i: Column(no_wrap=False, overflow="fold", ratio=1) for i in range(2)}
        table = Table(
            title=field.field,
            headers=("pinned", "fresh"),
            rows=((field.pinned or "∅", field.fresh or "∅"),),
            columns=columns,
            box="HEAVY_HEAD",
            title_justify="center",
            pad_edge=True,
            width=console.width,  # the two sides share the whole terminal
        )
        console.print(rich_table(table))
        return
    width = max(20, (shutil.get_terminal_size((120, 20)).columns - 3) // 2)
    screen.line("\n".join(side_by_side_lines(field, width)))
