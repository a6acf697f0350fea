"""How `proveai run` reads on a terminal: the replay progress, the 80-column summary table,
per-edge totals, where the artifacts are, and the notes and warnings of what was not
re-executed or judged."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

from prove_common.progress import ProgressReporter, make_progress
from prove_common.tables import Column, Table, rich_table, terminal_console
from proveai.diff.verdict import Status
from proveai.replay.runner import RunResult

# each edge status's colour, in the order the per-edge totals read
STATUS_STYLE = {
    Status.UNCHANGED: "green",
    Status.DRIFTED: "yellow",
    Status.REGRESSED: "bold red",
    Status.INCONCLUSIVE: "bold magenta",
    Status.PATH_CHANGED: "magenta",
    Status.ITERATION_COUNT_CHANGED: "blue",
}
TABLE_WIDTH = 80


def replay_progress(err: IO[str], *, pretty: bool, color: bool) -> ProgressReporter:
    """Progress on `err`: a rich bar when `pretty` (a terminal), a plain line per replayed trace
    otherwise."""
    return make_progress(
        err,
        pretty=pretty,
        label="replaying",
        line=lambda done, total, trace_id: f"replayed {done}/{total} {trace_id}" if done else None,
        every_tenth=False,
        rate=False,
        eta=False,
        color=color,
    )


def print_summary(
    result: RunResult, *, color: bool = False, out: IO[str] | None = None, err: IO[str] | None = None
) -> None:
    """The 80-column summary table, per-edge totals and where the artifacts are, on `out`
    (stdout by default); what was not re-executed or judged on `err` (stderr)."""
    out, err = out or sys.stdout, err or sys.stderr
    report = Path(result.report_paths[-1])  # the --report copy when asked, else the run folder's
    rows, styles = [], []
    for trace_id, verdict in result.verdicts:
        rows.append((trace_id[:7] + "…", verdict.edge, verdict.status, " ".join(verdict.rationale.split())))
        styles.append((None, None, STATUS_STYLE.get(verdict.status) if color else None, None))
    table = Table(
        f"{len(result.pairs)} trace(s) → {report}",
        ("Trace", "Edge", "Verdict", "Rationale"),
        tuple(rows),
        styles=tuple(styles),
        columns={
            0: Column(no_wrap=True, width=8),
            1: Column(no_wrap=True, overflow="ellipsis", ratio=4),
            2: Column(no_wrap=True, width=12),
            3: Column(no_wrap=True, overflow="ellipsis", ratio=3),
        },
        box="HEAVY_HEAD", title_justify="center", pad_edge=True, width=TABLE_WIDTH,
    )
    terminal_console(out, color=color, width=TABLE_WIDTH, soft_wrap=False).print(rich_table(table))
    lines = ["", "Per-edge totals:"]
    for edge, counts in result.metrics.by_edge.items():
        parts = [f"{counts[s]} {s}" for s in STATUS_STYLE if counts.get(s)]
        lines.append(f"  {edge}: {', '.join(parts)}")
    metrics = result.metrics
    lines.append("")
    lines.append(f"run artifacts: {result.run.path}/ (manifest, verdicts, metrics)")
    lines.append(f"report: {' and '.join(str(p) for p in result.report_paths)}")
    lines.append(
        f"model calls: {metrics.cache_misses} live, {metrics.cache_hits} from cache · "
        f"judge: {result.judge_model}"
    )
    regressed = metrics.regressed
    unjudged = metrics.unjudged
    if regressed:
        lines.append(f"{regressed} edge(s) regressed: exit 1")
    elif result.exit_code == 3:
        lines.append(f"{unjudged} changed edge(s) could not be judged (--strict-judge): exit 3")
    else:
        lines.append("no edge regressed: exit 0")
    out.write("\n".join(lines) + "\n")
    out.flush()
    if metrics.live_spans == 0:
        err.write(
            "note: no span was re-executed: the traces hold no captured model request (agents that call "
            "their model through proveai's providers record one)\n"
        )
        err.write("next: add --override AGENT=PATH, or re-run the pipeline: proveai snapshot verify\n")
    for agent, count in metrics.reinvoked.items():
        err.write(
            f"note: {agent}: re-executed {count} time(s) by calling its captured function with new inputs\n"
        )
    for agent, why in metrics.not_reexecuted.items():  # per agent: why its output is stale
        err.write(f"warning: {agent}: inputs changed upstream but it was {why}\n")
    if unjudged:  # loud: a changed edge the judge never saw is not evidence of equivalence
        reasons = "; ".join(metrics.unjudged_reasons[:3])
        err.write(f"warning: {unjudged} changed edge(s) were not judged ({reasons})\n")
        err.write(f"next: {_judge_hint(metrics.unjudged_reasons)}\n")


def _judge_hint(reasons: list[str]) -> str:
    """What to do about unjudged edges, from why the judge did not decide them."""
    text = " ".join(reasons)
    if "malformed judge reply" in text:
        return "the judge answered but not with a verdict: pass a stronger model with --judge-model"
    if "could not connect" in text or "timed out" in text:
        return "the judge's endpoint is unreachable: check that it is up and its base URL"
    if "no provider for judge model" in text or "not set" in text:
        return "set PROVEAI_JUDGE_MODEL and its provider variables, or pass --judge-model"
    return "check the judge model and its provider (see the reasons above), or pass --judge-model"
