"""`proveai run`: replay traces against overrides, attribute edges, write the report, gate CI."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from prove_common.cliapp import add_plain_option
from prove_common.console import is_pretty, wants_color
from prove_common.progress import ProgressReporter, make_progress
from prove_common.tables import Column, Table, rich_table, terminal_console
from proveai.cli._traces_table import add_no_color_option
from proveai.cli.status import add_repeatable, add_traces_option, key_value_pairs, parse_filters
from proveai.replay.runner import RunRequest, RunResult, execute_run
from proveai.report import write_html_report
from proveai.store import Store, default_traces_dir

HELP = "replay traces against overrides, attribute edges, write the report"
DESCRIPTION = (
    "Replay stored traces (filtered, or a named baseline) with prompt/model overrides, grade every "
    "parent→child edge unchanged / drifted / regressed through the three-tier diff, write "
    "proveai/runs/<id>/ (manifest, verdicts, metrics, report.html). Exit 0 when no edge regressed, "
    "1 when one did, 2 on a usage or input error."
)
STATUS_STYLE = {
    "unchanged": "green",
    "drifted": "yellow",
    "regressed": "bold red",
    "inconclusive": "bold magenta",
    "path_changed": "magenta",
    "iteration_count_changed": "blue",
}
TABLE_WIDTH = 80


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("run", parents=[parent], help=HELP, description=DESCRIPTION)
    add_traces_option(p)
    add_repeatable(
        p,
        "--filter",
        "KEY=VALUE",
        "repeatable, AND-ed: outcome=good|bad|skip|none, version=V, agent=NAME, detection=..., since=1d",
    )
    p.add_argument("--baseline", metavar="NAME[@VERSION]", help="replay a named baseline's traces")
    p.add_argument("--experiment", metavar="NAME", help="apply a named experiment's overrides")
    add_repeatable(
        p,
        "--override",
        "AGENT=PATH",
        "repeatable; PATH's contents become AGENT's system prompt during replay",
    )
    add_repeatable(
        p,
        "--counterfactual",
        "AGENT[,AGENT...]",
        "replay only these agents live; hold the rest at their recorded outputs",
    )
    add_repeatable(
        p,
        "--hold-at",
        "SPAN_ID[,SPAN_ID...]",
        "re-execute only these captured spans; hold everything else",
    )
    p.add_argument(
        "--propagate",
        action="store_true",
        help="with --counterfactual/--hold-at: held agents whose inputs changed re-execute",
    )
    p.add_argument(
        "--no-reinvoke",
        action="store_true",
        help="never call a captured agent function: agents without a captured model request keep "
        "their recorded output even when their inputs changed",
    )
    p.add_argument(
        "--report",
        metavar="PATH",
        type=Path,
        default=None,
        help="also write the HTML report here (it is always in proveai/runs/<id>/report.html)",
    )
    p.add_argument(
        "--embedder",
        choices=("none", "local", "openai"),
        default="none",
        help="Tier-2 backend (default none: text mismatches go straight to the judge)",
    )
    p.add_argument(
        "--judge-model",
        metavar="MODEL",
        default=None,
        help="Tier-3 model (default $PROVEAI_JUDGE_MODEL, else claude-haiku-4-5)",
    )
    p.add_argument("--no-cache", action="store_true", help="bypass the on-disk response cache")
    p.add_argument("--jobs", type=_jobs, default=4, metavar="N", help="traces replayed at once (default 4)")
    p.add_argument(
        "--strict-judge",
        action="store_true",
        default=os.environ.get("PROVEAI_STRICT_JUDGE", "").lower() in ("1", "true", "yes"),
        help="exit 3 when an edge that changed could not be judged (also PROVEAI_STRICT_JUDGE=1)",
    )
    add_plain_option(p, False)
    add_no_color_option(p)
    p.set_defaults(func=run)


def _jobs(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"--jobs must be a whole number from 1 to 64, not {text!r}")
    return int(text)


def parse_assignments(flag: str, items: list[str], what: str) -> dict[str, str]:
    """AGENT=VALUE pairs; a malformed one, or an agent given two values, is a usage error."""
    return key_value_pairs(flag, items, f"AGENT={what}", f"e.g. {flag} qa_check=prompts/qa_v2.md")


def split_list(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(part.strip() for item in items for part in item.split(",") if part.strip()))


def run(args: argparse.Namespace) -> int:
    request = RunRequest(
        store=Store("."),
        traces_dir=Path(args.traces) if args.traces else default_traces_dir(),
        filters=parse_filters(args.filter),
        baseline=args.baseline,
        experiment=args.experiment,
        override_files=parse_assignments("--override", args.override, "PATH"),
        counterfactual=split_list(args.counterfactual),
        hold_at=split_list(args.hold_at),
        propagate=args.propagate,
        reinvoke=not args.no_reinvoke,
        report=args.report,
        embedder=args.embedder,
        judge_model=args.judge_model,
        no_cache=args.no_cache,
        strict_judge=args.strict_judge,
        jobs=args.jobs,
        argv=tuple(sys.argv),
    )
    progress = _progress(args)
    try:
        result = execute_run(request, progress=progress)
    finally:
        progress.close()
    for path in result.report_paths:  # the run folder's report.html, then the --report copy
        write_html_report(
            result.pairs, path, result.judge_model, run_id=result.run.run_id, embedder=result.embedder
        )
    print_summary(result, color=is_pretty(args) and wants_color(args))
    return result.exit_code


def _progress(args: argparse.Namespace) -> ProgressReporter:
    """Progress on stderr: a rich bar on a terminal, a plain line per replayed trace on a pipe."""
    return make_progress(
        sys.stderr,
        pretty=is_pretty(args, sys.stderr),
        label="replaying",
        line=lambda done, total, trace_id: f"replayed {done}/{total} {trace_id}" if done else None,
        every_tenth=False,
        rate=False,
        eta=False,
        color=wants_color(args),
    )


def print_summary(result: RunResult, *, color: bool = False) -> None:
    """The 80-column summary table, per-edge totals and where the artifacts are."""
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
    terminal_console(color=color, width=TABLE_WIDTH, soft_wrap=False).print(rich_table(table))
    out = ["", "Per-edge totals:"]
    for edge, counts in result.metrics.by_edge.items():
        parts = [f"{counts[s]} {s}" for s in STATUS_STYLE if counts.get(s)]
        out.append(f"  {edge}: {', '.join(parts)}")
    metrics = result.metrics
    out.append("")
    out.append(f"run artifacts: {result.run.path}/ (manifest, verdicts, metrics)")
    out.append(f"report: {' and '.join(str(p) for p in result.report_paths)}")
    out.append(
        f"model calls: {metrics.cache_misses} live, {metrics.cache_hits} from cache · "
        f"judge: {result.judge_model}"
    )
    regressed = metrics.regressed
    unjudged = metrics.unjudged
    if regressed:
        out.append(f"{regressed} edge(s) regressed: exit 1")
    elif result.exit_code == 3:
        out.append(f"{unjudged} changed edge(s) could not be judged (--strict-judge): exit 3")
    else:
        out.append("no edge regressed: exit 0")
    sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.flush()
    if metrics.live_spans == 0:
        sys.stderr.write(
            "note: no span was re-executed: the traces hold no captured model request (agents that call "
            "their model through proveai's providers record one)\n"
        )
        sys.stderr.write("next: add --override AGENT=PATH, or re-run the pipeline: proveai snapshot verify\n")
    for agent, count in metrics.reinvoked.items():
        sys.stderr.write(
            f"note: {agent}: re-executed {count} time(s) by calling its captured function with new inputs\n"
        )
    for agent, why in metrics.not_reexecuted.items():  # per agent: why its output is stale
        sys.stderr.write(f"warning: {agent}: inputs changed upstream but it was {why}\n")
    if unjudged:  # loud: a changed edge the judge never saw is not evidence of equivalence
        reasons = "; ".join(metrics.unjudged_reasons[:3])
        sys.stderr.write(f"warning: {unjudged} changed edge(s) were not judged ({reasons})\n")
        sys.stderr.write(f"next: {_judge_hint(metrics.unjudged_reasons)}\n")


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
