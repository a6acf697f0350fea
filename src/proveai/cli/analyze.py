"""`proveai analyze`: retired; detection is written at capture time. Exits 2 with a redirect."""

from __future__ import annotations

import argparse

from proveai.errors import EXIT_USAGE, ProveAIError

HELP = "deprecated: detection is written at capture time"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("analyze", parents=[parent], help=HELP, description=HELP)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise ProveAIError(
        "proveai analyze was retired: detection (clean / suspect / flagged) is written automatically "
        "at capture time by FileExporter",
        suggestions=["proveai status --filter detection=flagged"],
        exit_code=EXIT_USAGE,
    )
