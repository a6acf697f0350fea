"""How `proveai snapshot` draws its results: tables (Rich on a terminal, plain on a pipe), the
re-run progress, the verify summary, the warnings for changes nobody checked, and the diff."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prove_common.console import is_pretty
from prove_common.progress import ProgressReporter, make_progress
from prove_common.tables import Column, Table, draw_table, rich_table, terminal_console
from proveai.diff.verdict import AgentVerdict, Status
from proveai.snapshot.diffview import DiffReport, FieldDiff, side_by_side_lines
from proveai.snapshot.model import Snapshot, SnapshotEntry, short_hash
from proveai.snapshot.pin import InitResult
from proveai.snapshot.render import (
    REPLICATE_HEADERS,
    VERDICT_HEADERS,
    replicate_rows,
    snapshot_table,
    summary_line,
    verdict_cells,
)
from proveai.snapshot.update import UpdateResult
from proveai.snapshot.verify import GateVerdict, VerifyResult


def emit_table(args: argparse.Namespace, title: str | None, headers: Any, rows: Any) -> None:
    draw_table(snapshot_table(title, headers, rows), sys.stdout, pretty=is_pretty(args, sys.stdout))


class RunProgress:
    """Pipeline re-runs as they happen: a rich bar on a terminal, plain lines on a pipe.

    Written to stderr so stdout stays the result. Started at the first report, closed when
    every run is done.
    """

    def __init__(self, args: argparse.Namespace, label: str) -> None:
        self.label = label
        self.pretty = is_pretty(args, sys.stderr)
        self.reporter: ProgressReporter | None = None

    def _line(self, done: int, total: int, item: str) -> str | None:
        return f"{self.label}: pipeline run {done + 1} of {total}" if done < total else None

    def __call__(self, done: int, total: int) -> None:
        if self.reporter is None:
            self.reporter = make_progress(
                sys.stderr,
                pretty=self.pretty,
                label=f"{self.label}: re-running the pipeline",
                line=self._line,
                every_tenth=False,
                rate=False,
            )
        self.reporter(done, total)
        if done >= total:
            self.reporter.close()
            self.reporter = None


def render_init(result: InitResult) -> None:
    snap = result.snapshot
    extra = f" · {snap.replicates} replicate(s)" if snap.replicates > 1 else ""
    quick = " · quick-only" if snap.quick_only else ""
    tail = f"{len(snap.agents)} agent(s){extra}{quick} · trace {snap.trace_id[:12]}…"
    if result.unchanged:
        print(f"Snapshot '{snap.name}' v{snap.version} already pins this — {tail}")
    else:
        print(f"Wrote snapshot '{snap.name}' v{snap.version} — {tail}")
    if result.varying:
        sys.stderr.write(
            f"warning: {', '.join(result.varying)} gave different outputs for the same input "
            "(a sampled model): a single-run verify cannot tell that noise from a regression\n"
        )
        if snap.replicates < 2:
            sys.stderr.write(f"next: proveai snapshot init {snap.name} --replicates 10\n")


def render_show(args: argparse.Namespace, snap: Snapshot) -> None:
    print(
        f"Snapshot '{snap.name}' v{snap.version} · trace {snap.trace_id[:12]}… · {snap.replicates} capture(s)"
    )
    inv = snap.invocation
    if inv:
        command = " ".join(["python", *inv.get("argv", [])])
        print(f"Invocation: {command}  (cwd {inv.get('cwd', '.')})")
    else:
        print("Invocation: none recorded (verify falls back to --quick)")
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
    emit_table(args, None, ("Agent", "Kind", "Model", "Parent", "Calls", "Prompt", "Output", "Source"), rows)


def render_list(args: argparse.Namespace, entries: Sequence[SnapshotEntry], snapshots_dir: Path) -> None:
    if not entries:
        print(f"No snapshots in {snapshots_dir}")
        print("next: proveai snapshot init")
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
    emit_table(args, None, ("Name", "Version", "Agents", "Captures", "Trace", "Status"), rows)


def render_verify(args: argparse.Namespace, result: VerifyResult) -> None:
    title = f"Snapshot '{result.snapshot.name}' v{result.snapshot.version}"
    emit_table(args, title, VERDICT_HEADERS, verdict_cells(result))
    if result.replicate_verdicts:
        emit_table(
            args,
            "Replicates (failing = regressed, missing or iteration count changed)",
            REPLICATE_HEADERS,
            replicate_rows(result),
        )
    for note in result.notes:
        print(f"note: {note}")
    print(summary_line(result))
    print(f"Report: {result.run_dir / 'report.html'}")
    drifted = [v.agent for v in result.verdicts if v.status == Status.DRIFTED]
    if drifted:
        sys.stderr.write(f"warning: drifted (not failing): {', '.join(drifted)}\n")
    unjudged = result.unjudged
    if unjudged:
        warn_unjudged(result, unjudged)
    judge = result.metrics.judge
    if judge.calls or judge.malformed:
        sys.stderr.write(
            f"judge: {judge.calls} live call(s), {judge.malformed} malformed repl(ies), "
            f"{judge.seconds:.1f} s (max_tokens {judge.max_tokens})\n"
        )


def warn_unjudged(result: VerifyResult, unjudged: Sequence[AgentVerdict]) -> None:
    """The loud warning for changes nobody checked, with a next: line saying what is wrong."""
    names = ", ".join(v.agent for v in unjudged)
    if result.metrics.judge_model is None:
        sys.stderr.write(
            f"warning: hash-only mode: {len(unjudged)} agent(s) changed and were not graded: {names}\n"
        )
        return
    noisy = [v for v in unjudged if v.sampling_noise]
    judged = [v for v in unjudged if v not in noisy]
    if noisy:
        sys.stderr.write(
            f"warning: the outputs of {', '.join(v.agent for v in noisy)} vary from run to run (sampled "
            "model, same input, unchanged agent): one run cannot call that a regression\n"
            f"next: proveai snapshot init {result.snapshot.name} --replicates 10, then verify with "
            "--replicates 10\n"
        )
    if not judged:
        return
    already_failing = result.gate in (GateVerdict.FAIL, GateVerdict.INCONCLUSIVE)
    tail = "" if already_failing else "; --strict-judge makes this exit 3"
    sys.stderr.write(
        f"warning: {len(judged)} agent(s) changed but the judge could not grade them: "
        f"{', '.join(v.agent for v in judged)}. This run did NOT check them{tail}\n"
    )
    unfit = result.metrics.judge_unfit
    if unfit and result.metrics.judge_unreachable:
        sys.stderr.write(f"next: the judge is unreachable ({unfit}); check its endpoint and key\n")
    elif unfit:
        sys.stderr.write(
            f"next: the judge failed its known-pair check ({unfit}); pass a stronger model with "
            "--judge-model\n"
        )


def render_update(result: UpdateResult, agents: Sequence[str]) -> None:
    snap = result.snapshot
    which = "every agent" if not agents else ", ".join(result.agents)
    print(
        f"Updated snapshot '{snap.name}' v{result.previous_version} → v{snap.version} — accepted {which} "
        f"from run {result.run_dir.name}"
    )


def render_diff(args: argparse.Namespace, report: DiffReport) -> None:
    print(f"Snapshot '{report.snapshot}' v{report.version} vs run {report.run_id}")
    pretty = is_pretty(args, sys.stdout)
    shown = 0
    for agent_diff in report.agents:
        if not agent_diff.changed and not args.all:
            continue
        shown += 1
        header = f"== {agent_diff.agent} (call {agent_diff.iteration + 1})"
        if agent_diff.note:
            header += f" — {agent_diff.note}"
        print(header)
        for field in agent_diff.fields:
            if not field.changed and not args.all:
                continue
            if args.side_by_side:
                _side_by_side(field, pretty)
            else:
                print(field.unified or f"--- {field.field}: unchanged")
    if shown == 0:
        print("No differences: every agent matches the snapshot.")


def _side_by_side(field: FieldDiff, pretty: bool) -> None:
    if pretty:
        console = terminal_console(sys.stdout)
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
    print("\n".join(side_by_side_lines(field, width)))
