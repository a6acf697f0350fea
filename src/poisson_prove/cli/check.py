"""`poisson-prove check [BEFORE] [AFTER]`: the CI gate, exit 4 when a failure outcome rose."""

from __future__ import annotations

import argparse

from poisson_prove.cli.diff import add_comparison_arguments, run_comparison

HELP = "the CI gate: compare two runs, exit 4 when a failure outcome rose"
DESCRIPTION = (
    "The same comparison and report as diff; exits 4 when any failure outcome rose in any "
    "condition (a worse or trade verdict), 0 otherwise, 1 when the runs cannot be compared."
)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("check", parents=[parent], help=HELP, description=DESCRIPTION)
    add_comparison_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_comparison(args, "check")
