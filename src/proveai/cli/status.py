"""`proveai status`: recent traces with outcome, detection and age."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prove_common.cliapp import add_plain_option, path_value
from prove_common.console import is_pretty, wants_color
from proveai.errors import ProveAIError
from proveai.render.traces import DASH, DETECTION_STYLE, OUTCOME_STYLE, age, draw_traces, print_warnings
from proveai.store import TRACES_ENV, default_traces_dir
from proveai.store.traces.reading import FILTER_KEYS, list_traces, validate_filter

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
    add_repeatable(parser, "--filter", "KEY=VALUE", FILTER_HELP)
    parser.add_argument("--limit", type=limit_value, default=20, help="show at most N traces (default 20)")
    add_store_option(parser)
    parser.set_defaults(func=run)


TRACES_HELP = "the trace store folder (default: $PROVEAI_TRACES_DIR or ./proveai/traces)"


def add_traces_option(parser: argparse.ArgumentParser) -> None:
    """--traces PATH, as every verb that reads the store spells it."""
    parser.add_argument("--traces", metavar="PATH", type=path_value, default=None, help=TRACES_HELP)


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """The options of a trace listing (status, list): --traces, --plain and --no-color."""
    add_traces_option(parser)
    add_plain_option(parser, False)
    add_no_color_option(parser)


def add_no_color_option(parser: argparse.ArgumentParser) -> None:
    """--no-color: the table still drawn on a terminal, without colour or ANSI styles (--plain,
    a separate switch, prints what a pipe gets)."""
    parser.add_argument(
        "--no-color", dest="no_color", action="store_true",
        help="on a terminal, draw the table without colour (CI logs)",
    )


def store_of(args: argparse.Namespace) -> Path:
    """The store to read. A folder the user named, with --traces or $PROVEAI_TRACES_DIR, that
    does not exist is an input error; only the default ./proveai/traces may be absent (a project
    that has captured nothing yet: "no traces yet")."""
    if args.traces is not None:
        path = Path(args.traces)
        if not path.is_dir():
            raise ProveAIError(
                f"no trace store at {path}" + (" (it is a file)" if path.exists() else ""),
                suggestions=["point --traces at the folder FileExporter writes (default ./proveai/traces)"],
            )
        return path
    store = default_traces_dir()
    if os.environ.get(TRACES_ENV) and not store.exists():  # a file is list_traces' error
        raise ProveAIError(
            f"no trace store at {store} (${TRACES_ENV}): no such folder",
            suggestions=[f"point ${TRACES_ENV} at the folder FileExporter writes, or unset it"],
        )
    return store


def limit_value(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--limit must be a positive whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--limit must be a positive whole number, not {text!r}")
    return value


def add_repeatable(
    parser: argparse.ArgumentParser, flag: str, metavar: str, help: str, default: list[str] | None = None
) -> None:
    """A flag that may be given several times, collected in order (KEY=VALUE pairs, lists)."""
    parser.add_argument(
        flag, action="append", default=[] if default is None else default, metavar=metavar, help=help
    )


def add_actions(
    subparsers: argparse._SubParsersAction,
    parent: argparse.ArgumentParser,
    verb: str,
    help: str,
    run: Callable[[argparse.Namespace], int],
) -> argparse._SubParsersAction:
    """A verb whose first argument is a required ACTION (baseline create, experiment new, ...)."""
    p = subparsers.add_parser(verb, parents=[parent], help=help, description=help + ".")
    p.set_defaults(func=run)
    return p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))


def key_value_pairs(flag: str, items: list[str], expects: str, example: str) -> dict[str, str]:
    """KEY=VALUE items of a repeatable flag; a malformed item, or a key given two different
    values, is a usage error (the same pair twice is harmless)."""
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise ProveAIError(f"{flag} expects {expects}, got {item!r}", suggestions=[example])
        if key in pairs and pairs[key] != value:
            raise ProveAIError(f"{flag} {key} given twice ({pairs[key]!r} and {value!r})")
        pairs[key] = value
    return pairs


def parse_filters(items: list[str]) -> dict[str, str]:
    example = f"keys: {', '.join(FILTER_KEYS)}; e.g. --filter detection=flagged"
    filters = key_value_pairs("--filter", items, "key=value", example)
    try:
        validate_filter(filters)
    except ValueError as exc:
        raise ProveAIError(f"--filter: {exc}") from None
    return filters


def select_traces(args: argparse.Namespace, filters: dict[str, str], shown_as: str) -> tuple[Path, list[Any]]:
    """The store and its rows matching `filters`, oldest first (warnings printed); no rows
    prints the "no traces" line. `shown_as` renders the filters as the user typed them."""
    store = store_of(args)
    listing = list_traces(store, filters)
    print_warnings(listing.warnings)
    if not listing.rows:
        sys.stdout.write(f"no traces {'match ' + shown_as if filters else 'yet'} in {store}\n")
    return store, list(listing.rows)


def run(args: argparse.Namespace) -> int:
    filters = parse_filters(args.filter)
    store, found = select_traces(args, filters, " ".join(f"{k}={v}" for k, v in filters.items()))
    if not found:
        return 0
    now = dt.datetime.now(dt.UTC)
    shown = list(reversed(found))[: args.limit]
    rows = [
        [
            r.trace_id, ", ".join(r.versions) or DASH, ", ".join(r.agents) or DASH,
            r.outcome or DASH, r.detection, age(r.timestamp, now),
        ]
        for r in shown
    ]
    title = f"{len(shown)} of {len(found)} trace(s) in {store}"
    headers = ["Trace ID", "Version", "Agents", "Outcome", "Detection", "Age"]
    styles = [None, None, None, OUTCOME_STYLE, DETECTION_STYLE, None]
    draw_traces(title, headers, rows, styles, pretty=is_pretty(args), color=wants_color(args))
    return 0
