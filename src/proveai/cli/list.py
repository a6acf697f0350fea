"""`proveai list`: the legacy browse view of the trace store."""

from __future__ import annotations

import argparse

from prove_common.console import is_pretty, wants_color
from proveai.cli.status import add_store_option, limit_value, select_traces
from proveai.errors import ProveAIError
from proveai.render.traces import DASH, OUTCOME_STYLE, draw_traces, timestamp_text
from proveai.store.traces.reading import FilterError, validate_filter

HELP = "legacy browse view of the trace store"
DESCRIPTION = "List stored traces, newest first: Trace ID, Version, Agents, Outcome, Timestamp."


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("list", parents=[parent], help=HELP, description=DESCRIPTION)
    parser.add_argument("--outcome", default=None, help="only traces with this outcome: good|bad|skip|none")
    parser.add_argument("--version", default=None, help="only traces where an agent declared this version")
    parser.add_argument("--limit", type=limit_value, default=None, help="show at most N traces (default all)")
    add_store_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    filters = {k: v for k, v in (("outcome", args.outcome), ("version", args.version)) if v is not None}
    try:
        validate_filter(filters)
    except FilterError as exc:
        raise ProveAIError(f"--{exc.key}: {exc}") from None
    store, found = select_traces(args, filters, " ".join(f"--{k} {v}" for k, v in filters.items()))
    if not found:
        return 0
    shown = list(reversed(found))
    if args.limit:
        shown = shown[: args.limit]
    rows = [
        [r.trace_id, ", ".join(r.versions) or DASH, ", ".join(r.agents) or DASH, r.outcome or DASH,
         timestamp_text(r.timestamp)]
        for r in shown
    ]
    headers = ["Trace ID", "Version", "Agents", "Outcome", "Timestamp"]
    title = f"{len(shown)} trace(s) in {store}"
    styles = [None, None, None, OUTCOME_STYLE, None]
    draw_traces(title, headers, rows, styles, pretty=is_pretty(args), color=wants_color(args))
    return 0
