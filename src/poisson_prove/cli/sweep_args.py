"""The flags of `poisson-prove sweep`: parsing only; the command itself is cli/sweep.py."""

from __future__ import annotations

import argparse

from poisson_prove.backends import BACKENDS

HELP = "run every condition of a sweep spec and store every episode"
DESCRIPTION = (
    "Run every condition of a sweep spec, N replicates each, on the local machine or a\n"
    "remote backend. The plan is printed first, with its cost estimate, and the sweep\n"
    "starts only after a yes."
)
EPILOG = """examples:
  poisson-prove sweep
  poisson-prove sweep --target my_agent:rollout_patched --pair-with latest --yes
  poisson-prove sweep other.toml --target my_agent:rollout --replicates 300
"""
REMOTE = (
    "remote backends (override the [modal] table; --infra-retries, --max-cost and --est-seconds "
    "also override [burla])"
)


def add_sweep_parser(
    subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser
) -> argparse.ArgumentParser:
    """The `sweep` subcommand with every flag, as `poisson-prove sweep --help` lists them."""
    p = subparsers.add_parser(
        "sweep",
        parents=[parent],
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "spec",
        nargs="?",
        metavar="SPEC.toml",
        default=None,
        help="the sweep spec: the target, the axes, the replicates (default: ./prove.toml)",
    )
    p.add_argument(
        "--target",
        metavar="pkg.module:rollout",
        help="import path of the rollout function; wins over the spec's target (default: the spec's target)",
    )
    p.add_argument(
        "--budget",
        type=float,
        metavar="USD",
        help="size the run to the largest replicates this many dollars buy (backend estimate plus "
        "the backend table's cost_per_episode); refused when it cannot reach --max-mde",
    )
    p.add_argument(
        "--replicates",
        type=int,
        metavar="N",
        help="replicates per condition for this run, recorded in its manifest "
        "(default: the spec's replicates)",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where the rollouts run: local (this machine), dask or ray (a cluster, local or at an "
        "address), modal or burla (the cloud; burla is experimental) (default: local)",
    )
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument(
        "--salt", metavar="HEX", help="the run salt seeds are derived from (default: a fresh one)"
    )
    seeds.add_argument(
        "--pair-with",
        metavar="RUN",
        help="inherit that run's salt, so the two runs share their seeds (default: none)",
    )
    seeds.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="RUN",
        help="continue that partial run where it stopped; alone, the latest partial "
        "run; written after SPEC.toml when a spec is given, so the spec is not read "
        "as the run (default: none)",
    )
    p.add_argument(
        "--stop-when-settled",
        action="store_true",
        help="with --pair-with: after each written batch, stop a condition once the sequential "
        "test has settled every failure outcome against the paired run, and the sweep when all "
        "have (default: run every planned replicate)",
    )
    p.add_argument("--name", metavar="TEXT", help="the name the new run goes by (default: computed)")
    p.add_argument(
        "--episode-timeout",
        type=float,
        metavar="S",
        help="seconds an episode may take before it is recorded as timed out (default: no limit)",
    )
    p.add_argument(
        "--max-rollouts",
        type=int,
        metavar="N",
        help="stop after N rollouts and leave the run partial (default: run them all)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        default=25_000,
        help="rows written to the store at a time, or fewer once they waited a second "
        "(default: 25000)",
    )
    p.add_argument(
        "--max-mde",
        type=float,
        metavar="FRACTION",
        default=None,  # 0.200, or a resumed run's own
        help="the largest minimum detectable effect you accept for this design (default: 0.200)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and stop; nothing is run or written"
    )
    p.add_argument("--yes", action="store_true", help="skip the question after the plan")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the plan and the result as one JSON document instead of text",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="episodes at once, on every backend: local threads or processes, Dask and Ray in "
        "flight, Modal containers, Burla parallelism (default: the backend table's; 1 on local)",
    )
    remote = p.add_argument_group(REMOTE)
    remote.add_argument(
        "--infra-retries", type=int, metavar="N", help="retries per batch (default: the table's)"
    )
    remote.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="refuse before anything starts when the estimate is above this (default: no cap)",
    )
    remote.add_argument(
        "--est-seconds",
        type=float,
        metavar="S",
        help="seconds per episode, for the estimate (default: the table's)",
    )
    remote.add_argument("--app-name", metavar="NAME", help="the Modal app name (default: the table's)")
    remote.add_argument(
        "--image", metavar="SECTION", help="the [modal.SECTION] image table to build from (default: image)"
    )
    _shared_options_last(p)
    return p


def _shared_options_last(parser: argparse.ArgumentParser) -> None:
    """List --store, --plain and --debug after the sweep's own options, as the docs show them."""
    shared = [a for a in parser._actions if a.dest in ("store", "plain", "debug")]
    for collection in (parser._actions, parser._optionals._group_actions):
        for action in shared:
            if action in collection:
                collection.remove(action)
        collection.extend(shared)
