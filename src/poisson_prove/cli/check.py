"""`poisson-prove check [BEFORE] [AFTER]`: the CI gate, exit 4 when a failure outcome rose,
5 when nothing rose but the comparison could not have seen a rise of --max-mde (for runs with a
case axis: in a pooled row). Under --method logrank_bh a row rose when the log-rank test or the
runs' default rate test beside it found a rise (comparison.stats.condition_tests)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from poisson_prove.cli.diff import add_comparison_arguments, run_comparison
from prove_common.step_summary import append_step_summary, in_github_actions

if TYPE_CHECKING:
    from poisson_prove.comparison.gate import GateResult
    from poisson_prove.comparison.result import Comparison

HELP = "the CI gate: compare two runs, exit 4 when a failure outcome rose"
DESCRIPTION = (
    "The same comparison and report as diff; exits 4 when any failure outcome rose in any "
    "condition (a worse or trade verdict); exits 5 (inconclusive) when nothing rose but some "
    "no-change row could not have shown a rise of --max-mde (default: the after run's plan); "
    "0 otherwise; 1 when the runs cannot be compared. Runs with a case axis are gated on their "
    "pooled rows only (counted by case); the per-case rows are detail. With --method logrank_bh "
    "each row also gets the runs' default rate test (McNemar when paired, Fisher otherwise), and "
    "a rise either test finds counts: the gate never passes a rise the default check would catch."
)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("check", parents=[parent], help=HELP, description=DESCRIPTION)
    add_comparison_arguments(parser)
    parser.add_argument(
        "--max-mde",
        type=_fraction,
        metavar="X",
        help="the rise the comparison must have been able to show (default: the after run's plan)",
    )
    parser.add_argument(
        "--allow-inconclusive",
        action="store_true",
        help="exit 0 on a no-rise too small to trust (the behaviour before exit code 5)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_comparison(
        args, "check", report=lambda comparison, gated, code: github_report(args, comparison, gated, code)
    )


def github_report(
    args: argparse.Namespace, comparison: Comparison, gated: GateResult | None, exit_code: int
) -> None:
    """On the GitHub Actions run page: the verdict table appended to $GITHUB_STEP_SUMMARY (when
    set) and, on a runner (GITHUB_ACTIONS=true), one `::warning` annotation per condition that
    got worse, on stderr (stdout stays the report, or --json's one document)."""
    from poisson_prove.render.step_summary import check_markdown, worse_annotations  # numpy: as diff's
    from poisson_prove.store.runs import RunStore  # pyarrow: only once compared (`check --help`)

    problem = append_step_summary(check_markdown(comparison, gated, exit_code))
    if problem:
        sys.stderr.write(f"warning: {problem}\n")
    if in_github_actions():
        after = RunStore(getattr(args, "store", None)).resolve(comparison.after.run_id)
        spec = after.manifest.get("spec_path")
        for line in worse_annotations(comparison, spec=spec):
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--max-mde must be a number, got {text!r}") from None
    if not 0.0001 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"--max-mde must be between 0.0001 and 1, got {text}")
    return value
