"""`poisson-prove`: the command line. Parsing and rendering only; the work is in the library."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from poisson_prove.version import package_version
from prove_common.cliapp import add_debug_option, add_plain_option, path_value, run_app

# verb -> one line of help; each verb is the module poisson_prove.cli.<verb>
VERBS = {
    "sweep": "run every condition of a sweep spec and store every episode",
    "runs": "list the runs in the store",
    "diff": "compare two runs, per condition and failure outcome",
    "check": "the CI gate: compare two runs, exit 4 when a failure outcome rose",
    "inspect": "errors, episodes without an outcome, and one episode in full",
    "init": "write a sweep spec (prove.toml) for the example agent",
    "dashboard": "write (or serve) one HTML page of the store's runs and comparisons",
    "import": "store Inspect AI or lm-evaluation-harness logs as a run, to diff them",
}
# verbs whose module is not the verb's own name (`import` is a Python keyword)
MODULES = {"import": "import_logs"}


def add_common_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """--store, --plain and --debug, accepted before the verb and after it."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--store",
        metavar="PATH",
        type=path_value,
        default=default,
        help="the store folder (default: $POISSON_PROVE_STORE when set, else ./prove-runs)",
    )
    add_plain_option(parser, suppress)
    add_debug_option(parser, suppress)


def main(argv: Sequence[str] | None = None) -> int:
    return run_app(
        prog="poisson-prove",
        description="Did a change to your agent really change how often it fails?",
        version=package_version,  # read only for --version
        verbs=VERBS,
        package="poisson_prove.cli",
        argv=argv,
        common=add_common_options,
        modules=MODULES,
    )
