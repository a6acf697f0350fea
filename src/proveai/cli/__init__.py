"""`proveai`: the command line. Parsing and rendering only; the work is in the library."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from prove_common.cliapp import add_debug_option, run_app
from proveai.errors import ProveAIExit
from proveai.version import package_version

# verb -> one line of help; each verb is the module proveai.cli.<verb>
VERBS = {
    "snapshot": "the CI gate: init / show / list / verify / update / diff",
    "status": "recent traces with outcome, detection and age",
    "list": "legacy browse view of the trace store",
    "analyze": "deprecated: detection is written at capture time",
    "baseline": "named, versioned trace sets: create / list / show / refresh",
    "experiment": "named override sets: new / list / show",
    "run": "replay traces against overrides, attribute edges, write the report",
    "calibrate": "per-agent Tier-2 similarity thresholds from known-good traces",
    "ci": "scaffold the GitHub Actions gate (ci init)",
    "validate-fix": "deprecated: use proveai run --hold-at",
    "engine": "the local detection engine: serve / health",
}


def add_common_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """--debug, accepted before the verb and after it. Each drawing verb adds its own --plain
    (plain text, as a pipe gets it, on a terminal too); status, list and run also take
    --no-color (the table still drawn on a terminal, without colour)."""
    add_debug_option(parser, suppress)


def main(argv: Sequence[str] | None = None) -> int:
    return run_app(
        prog="proveai",
        description="Capture, snapshot and replay multi-agent LLM pipelines.",
        version=package_version,  # read only for --version
        verbs=VERBS,
        package="proveai.cli",
        argv=argv,
        common=add_common_options,
        unexpected_exit=ProveAIExit.UNEXPECTED,
    )
