"""`proveai analyze`: retired; detection is written at capture time. Exits 2 with a redirect."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from proveai.errors import ProveAIError, ProveAIExit

HELP = "deprecated: detection is written at capture time"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("analyze", parents=[parent], help=HELP, description=HELP)
    parser.set_defaults(func=run)
    accept_anything(parser)


def accept_anything(parser: argparse.ArgumentParser) -> None:
    """Whatever old flags a script still passes, answer with the redirect (not a usage error)."""
    original = parser.parse_known_args

    def parse_known_args(
        args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        given = list(args or [])
        if "-h" in given or "--help" in given:
            return original(given, namespace)
        parsed, _ = original([], namespace)
        parsed.rest = given
        return parsed, []

    parser.parse_known_args = parse_known_args  # type: ignore[method-assign,assignment]


def run(args: argparse.Namespace) -> int:
    raise ProveAIError(
        "proveai analyze was retired: detection (clean / suspect / flagged) is written automatically "
        "at capture time by FileExporter",
        suggestions=["proveai status --filter detection=flagged"],
        exit_code=ProveAIExit.USAGE,
    )
