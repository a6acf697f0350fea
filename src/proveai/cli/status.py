"""`proveai status`: recent traces with outcome, detection and age."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from proveai.cli._traces_table import (
    DASH,
    DETECTION_STYLE,
    OUTCOME_STYLE,
    add_store_option,
    age,
    limit_value,
    print_warnings,
    render,
    store_of,
)
from proveai.errors import ProveAIError

HELP = "recent traces with outcome, detection and age"
DESCRIPTION = (
    "List the newest traces of the store with their composite outcome (manual overrides win), "
    "detection status (clean / suspect / flagged) and age. Filters are AND-ed."
)
FILTER_HELP = (
    "key=value, repeatable, AND-ed: outcome=good|bad|skip|none, version=V, agent=NAME, "
    "detection=flagged|suspect|clean, since=30m|1h|2d|1w"
)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("status", parents=[parent], help=HELP, description=DESCRIPTION)
    parser.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE", help=FILTER_HELP)
    parser.add_argument("--limit", type=limit_value, default=20, help="show at most N traces (default 20)")
    add_store_option(parser)
    parser.set_defaults(func=run)


def parse_filters(items: list[str]) -> dict[str, str]:
    from proveai.capture.reading import FILTER_KEYS, validate_filter

    filters: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise ProveAIError(
                f"--filter expects key=value, got {item!r}",
                suggestions=[f"keys: {', '.join(FILTER_KEYS)}; e.g. --filter detection=flagged"],
            )
        if key in filters and filters[key] != value:
            raise ProveAIError(
                f"--filter {key} given twice ({filters[key]!r} and {value!r}); filters are AND-ed"
            )
        filters[key] = value
    try:
        validate_filter(filters)
    except ValueError as exc:
        raise ProveAIError(f"--filter: {exc}") from None
    return filters


def run(args: argparse.Namespace) -> int:
    from proveai.capture.reading import list_traces

    filters = parse_filters(args.filter)
    store = store_of(args)
    listing = list_traces(store, filters)
    print_warnings(listing.warnings)
    if not listing.rows:
        what = "match " + " ".join(f"{k}={v}" for k, v in filters.items()) if filters else "yet"
        sys.stdout.write(f"no traces {what} in {store}\n")
        return 0
    now = dt.datetime.now(dt.UTC)
    shown = list(reversed(listing.rows))[: args.limit]
    rows = [
        [
            r.trace_id, ", ".join(r.versions) or DASH, ", ".join(r.agents) or DASH,
            r.outcome or DASH, r.detection, age(r.timestamp, now),
        ]
        for r in shown
    ]
    title = f"{len(shown)} of {len(listing.rows)} trace(s) in {store}"
    headers = ["Trace ID", "Version", "Agents", "Outcome", "Detection", "Age"]
    render(args, title, headers, rows, [None, None, None, OUTCOME_STYLE, DETECTION_STYLE, None])
    return 0
