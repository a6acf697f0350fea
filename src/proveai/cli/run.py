"""`proveai run`: replay traces against overrides, attribute edges, write the report, gate CI."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from prove_common.cliapp import add_plain_option
from prove_common.console import is_pretty, wants_color
from proveai.cli.status import (
    add_no_color_option,
    add_repeatable,
    add_traces_option,
    key_value_pairs,
    parse_filters,
)
from proveai.errors import ProveAIError
from proveai.render.replay import print_summary, replay_progress
from proveai.render.report import write_html_report
from proveai.replay.runner import RunRequest, execute_run
from proveai.store import Store, default_traces_dir
from proveai.store.artifacts import split_override

HELP = "replay traces against overrides, attribute edges, write the report"
DESCRIPTION = (
    "Replay stored traces (filtered, or a named baseline) with prompt/model overrides, grade every "
    "parent→child edge unchanged / drifted / regressed through the three-tier diff, write "
    "proveai/runs/<id>/ (manifest, verdicts, metrics, report.html). Exit 0 when no edge regressed, "
    "1 when one did, 2 on a usage or input error."
)
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
    """AGENT=VALUE pairs; a malformed one, or an agent given two values, is a usage error. For
    AGENT=PATH an agent's name may hold `=` (store.artifacts.split_override says how it is split)."""
    if what != "PATH":
        return key_value_pairs(flag, items, f"AGENT={what}", f"e.g. {flag} qa_check=prompts/qa_v2.md")
    pairs: dict[str, str] = {}
    for item in items:
        agent, path = split_override(item, flag)
        if agent in pairs and pairs[agent] != path:
            raise ProveAIError(f"{flag} {agent} given twice ({pairs[agent]!r} and {path!r})")
        pairs[agent] = path
    return pairs


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
    progress = replay_progress(sys.stderr, pretty=is_pretty(args, sys.stderr), color=wants_color(args))
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
