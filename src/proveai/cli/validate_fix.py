"""`proveai validate-fix`: retired; counterfactual replay lives on `proveai run --hold-at`."""

from __future__ import annotations

import argparse

from proveai.cli.analyze import accept_anything
from proveai.errors import ProveAIError, ProveAIExit

HELP = "deprecated: use proveai run --hold-at"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("validate-fix", parents=[parent], help=HELP, description=HELP)
    parser.set_defaults(func=run)
    accept_anything(parser)


def run(args: argparse.Namespace) -> int:
    raise ProveAIError(
        "proveai validate-fix was retired: counterfactual replay now lives on proveai run",
        suggestions=[
            "proveai run --hold-at <span_id> --override AGENT=PATH",
            "proveai run --counterfactual AGENT --override AGENT=PATH",
        ],
        exit_code=ProveAIExit.USAGE,
    )
