"""`proveai ci init`: scaffold the GitHub Actions snapshot gate."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from proveai.ci.scaffold import DEFAULT_PROVIDER, PROVIDERS, scaffold
from proveai.cli.snapshot import verb_with_actions
from proveai.errors import ProveAIExit
from proveai.store import project_root


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser, actions = verb_with_actions(
        subparsers,
        parent,
        "ci",
        "scaffold the GitHub Actions gate (ci init)",
        "Scaffold CI for the snapshot gate.",
    )
    init = actions.add_parser("init", parents=[parent], help="write .github/workflows/proveai.yml")
    init.add_argument(
        "--provider",
        choices=list(PROVIDERS),
        default=DEFAULT_PROVIDER,
        help=f"which secret the workflow uses (default {DEFAULT_PROVIDER})",
    )
    init.add_argument(
        "--full", action="store_true", help="verify every snapshot (no auto-targeting), plus a weekly run"
    )
    init.add_argument("--python-version", help="Python of the CI job (default: the one running proveai)")
    init.add_argument("--force", action="store_true", help="overwrite an existing workflow")
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) != "init":
        args._parser.print_help()
        return ProveAIExit.USAGE
    result = scaffold(
        project_root(Path.cwd()),
        provider=args.provider,
        full=args.full,
        python_version=args.python_version,
        force=args.force,
    )
    print("Wrote .github/workflows/proveai.yml")
    print(f"Next: Add a repo secret named `{result.secret}`.")
    for name in result.extra_secrets:
        print(f"Next: Add a repo secret named `{name}`.")
    if result.sdk.warning:
        print(f"warning: {result.sdk.warning}", file=sys.stderr)
        print(
            "next: set the repository variable PROVEAI_SDK_REQUIREMENT to what CI should install "
            "(e.g. `poisson-prove @ git+https://github.com/<owner>/<repo>@<commit>`)",
            file=sys.stderr,
        )
    return ProveAIExit.OK
