"""`poisson-prove diff [BEFORE] [AFTER]`: compare two runs per condition and failure outcome."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from poisson_prove.cli.dashboard import refresh_after
from poisson_prove.errors import ProveExit
from poisson_prove.render.json import comparison_document, dumps
from poisson_prove.render.terminal import print_rich
from poisson_prove.render.text import CASE_CHOICES, CASES_SHOWN, plain_report
from poisson_prove.store import compared
from prove_common.console import is_pretty

if TYPE_CHECKING:
    from poisson_prove.comparison.gate import GateResult
    from poisson_prove.comparison.result import Comparison
    from poisson_prove.store.info import RunInfo

HELP = "compare two runs, per condition and failure outcome"
DESCRIPTION = (
    "Compare two runs of one agent: per condition and failure outcome, the rate by the common "
    "horizon before and after, a test (McNemar on shared seeds for runs paired at sweep time, "
    "Fisher otherwise), Benjamini-Hochberg over all tests, and a verdict. Runs whose spec "
    "declares a case axis (a benchmark, and every import) are judged per pooled group, counted "
    "by case (a sign-flip test over cases), with the cases that moved as detail. Without names: "
    "the latest run and the run it was paired with, else the two latest runs. One name: that run "
    "compared with the latest."
)


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("before", nargs="?", metavar="BEFORE", help="run name, id, id prefix or latest")
    parser.add_argument("after", nargs="?", metavar="AFTER", help="run name, id, id prefix or latest")
    parser.add_argument(
        "--method",
        choices=("mcnemar", "fisher", "logrank_bh"),
        help="the test (default: mcnemar for runs paired at sweep time, fisher otherwise)",
    )
    parser.add_argument(
        "--event",
        metavar="NAME",
        help="compare this outcome only; episode_timeout counts episodes stopped by --episode-timeout",
    )
    parser.add_argument("--q", type=float, default=0.05, help="Benjamini-Hochberg level (default 0.05)")
    parser.add_argument(
        "--cases",
        choices=CASE_CHOICES,
        default="moved",
        help="runs with a case axis: the per-case rows printed under the pooled ones, the cases "
        f"that moved (default; at most {CASES_SHOWN}, most-moved first) or all; --json has every case",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document (poisson-prove.diff/1)")


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("diff", parents=[parent], help=HELP, description=DESCRIPTION)
    add_comparison_arguments(parser)
    parser.set_defaults(func=run)


# what a verb does with the finished comparison besides printing it (check: the CI run page)
Reporter = Callable[["Comparison", "GateResult | None", int], None]


def run_comparison(args: argparse.Namespace, command: str, report: Reporter | None = None) -> int:
    """Compare, print the report (text or JSON), log it; the exit code for `command`."""
    # numpy, pyarrow: ~250 ms, only when comparing (`diff --help` stays instant)
    from poisson_prove.comparison import compare, default_runs

    store = getattr(args, "store", None)
    before, after = default_runs(args.before, args.after, store=store)
    comparison = compare(before, after, method=args.method, event=args.event, q=args.q, store=store)
    code: int = ProveExit.WORSE if command == "check" and comparison.any_worse else ProveExit.OK
    gated = _gate(args, comparison, after) if command == "check" else None
    if gated is not None:
        code = gated.exit_code
    notes = compared.resumed_notes((comparison.before, comparison.after))
    # which agent moved each row (docs/comparing.md): reads spans only of runs that have agents
    from poisson_prove.comparison.twins import attribute  # numpy, pyarrow: only when comparing

    attribution = attribute(comparison, store=store)
    if args.json:
        document = comparison_document(comparison, notes=notes, command=command, exit_code=code)
        document["attribution"] = attribution.to_dict()
        if gated is not None:
            document["gate"] = gated.to_dict()
        sys.stdout.write(dumps(document))
    elif is_pretty(args):
        from rich.console import Console  # rich: ~40 ms, only on a terminal

        console = Console(highlight=False)
        print_rich(comparison, notes, console, cases=args.cases, attribution=attribution)
    else:
        sys.stdout.write(plain_report(comparison, notes, cases=args.cases, attribution=attribution))
    if gated is not None and not args.json:
        _print_gate(gated)
    sys.stdout.flush()
    if report is not None:
        report(comparison, gated, code)
    compared.record(comparison.log_entry(command))
    refresh_after(args)  # the store's dashboard, if it has one
    return code


def _gate(args: argparse.Namespace, comparison: Comparison, after: RunInfo) -> GateResult:
    from poisson_prove.comparison.gate import (  # numpy: only when gating (`check --help`)
        gate,
        planned_max_mde,
    )

    max_mde = getattr(args, "max_mde", None)
    if max_mde is None:
        max_mde = planned_max_mde(after.manifest)
    return gate(comparison, max_mde, allow_inconclusive=bool(getattr(args, "allow_inconclusive", False)))


def _print_gate(gated: GateResult) -> None:
    message = gated.message()
    if message is None:
        return
    if gated.allow_inconclusive:
        message += " (allowed by --allow-inconclusive)"
    sys.stdout.write(message + "\n")
    next_line = gated.next_line()
    if next_line is not None:
        sys.stdout.write(next_line + "\n")


def run(args: argparse.Namespace) -> int:
    return run_comparison(args, "diff")
