"""`poisson-prove inspect [RUN]`: errors by kind, episodes without an outcome, one episode."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from poisson_prove.errors import ProveError
from poisson_prove.render.json import INSPECT_SCHEMA, dumps
from poisson_prove.store.checks import check_unique
from poisson_prove.store.runs import RunStore

HELP = "errors, episodes without an outcome, and one episode in full"
DESCRIPTION = (
    "Show a run's errors by kind (count, share, first messages, the conditions they hit) and "
    "its episodes without an outcome per condition; with --episode CONDITION/REPLICATE, one "
    "episode in full. CONDITION is the condition's label (\"ticket refund · temperature 0.7\"), "
    "its cell key, or name=value pairs (ticket=refund,temperature=0.7); REPLICATE counts from 0."
)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("inspect", parents=[parent], help=HELP, description=DESCRIPTION)
    parser.add_argument("run", nargs="?", default="latest", metavar="RUN", help="run name, id or latest")
    parser.add_argument(
        "--pair",
        nargs=2,
        metavar=("BEFORE", "AFTER"),
        help="with --episode: the episode's twins in two paired runs side by side, agent call by "
        "agent call, the first divergence marked",
    )
    parser.add_argument("--episode", metavar="CONDITION/REPLICATE", help="show one episode in full")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document (poisson-prove.inspect/1)"
    )
    parser.add_argument(
        "--otlp",
        action="store_true",
        help="with --episode: print the episode's spans as one OTLP JSON trace (ExportTraceServiceRequest)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # numpy, pyarrow: ~250 ms, only when a run is read (`inspect --help` stays instant)
    from poisson_prove.inspection.run import find_episode, inspect_run
    from poisson_prove.render import inspection as text  # numpy, pyarrow: as above

    store = getattr(args, "store", None)
    if args.otlp and (args.episode is None or args.json):
        raise ProveError(
            "--otlp writes one episode: it needs --episode CONDITION/REPLICATE (and no --json)",
            suggestions=[f'poisson-prove inspect "{args.run}" --episode CONDITION/REPLICATE --otlp'],
            exit_code=2,
        )
    if args.pair is not None:
        return _pair(args, store)
    info = RunStore(store).resolve(args.run)
    check_unique(info)  # a copied batch would be counted twice
    if args.episode is not None:
        detail = find_episode(info, args.episode, store=store)
        if args.otlp:
            from poisson_prove.inspection.otlp import episode_otlp  # opentelemetry: only for --otlp

            target_id = info.manifest.get("target_id")
            document = episode_otlp(detail, target_id if isinstance(target_id, str) else None)
            sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
        elif args.json:
            sys.stdout.write(dumps({"schema": INSPECT_SCHEMA, "episode": dataclasses.asdict(detail)}))
        else:
            sys.stdout.write(text.episode_text(detail))
        return 0
    result = inspect_run(args.run, store=store)
    if args.json:
        sys.stdout.write(dumps({"schema": INSPECT_SCHEMA, "run": dataclasses.asdict(result)}))
    else:
        sys.stdout.write(text.inspection_text(result))
    return 0


def _pair(args: argparse.Namespace, store: str | None) -> int:
    """`inspect --pair BEFORE AFTER --episode C/R`: two twins side by side."""
    # numpy, pyarrow: ~250 ms, only when a run is read (`inspect --help` stays instant)
    from poisson_prove.comparison.twins import pair_view_of
    from poisson_prove.inspection.run import find_episode  # numpy, pyarrow: as above
    from poisson_prove.render.attribution import pair_text  # numpy, pyarrow: as above

    if args.episode is None or args.otlp or args.run != "latest":
        raise ProveError(
            "--pair BEFORE AFTER shows one pair of twins: it needs --episode CONDITION/REPLICATE "
            "(and no RUN or --otlp)",
            suggestions=[
                f'poisson-prove inspect --pair "{args.pair[0]}" "{args.pair[1]}" '
                "--episode CONDITION/REPLICATE"
            ],
            exit_code=2,
        )
    runs = RunStore(store)
    before, after = runs.resolve(args.pair[0]), runs.resolve(args.pair[1])
    for info in (before, after):
        check_unique(info)  # a copied batch would be counted twice
    found_after = find_episode(after, args.episode, store=store)
    found_before = find_episode(before, f"{found_after.key}/{found_after.replicate}", store=store)
    view = pair_view_of(
        found_after.condition, found_after.key, found_after.replicate,
        (found_before.spans, found_before.seed, found_before.outcome),
        (found_after.spans, found_after.seed, found_after.outcome),
        names=(before.name, after.name),
    )
    if args.json:
        document = {"schema": INSPECT_SCHEMA, "pair": {"before": before.name, "after": after.name,
                                                        **dataclasses.asdict(view)}}
        sys.stdout.write(dumps(document))
    else:
        sys.stdout.write(pair_text(view, before.name, after.name))
    return 0
