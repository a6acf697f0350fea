"""`poisson-prove import inspect|lm-eval PATH...`: eval logs of other tools as one stored run."""

from __future__ import annotations

import argparse
import sys

from poisson_prove.importers import ImportResult, OutcomeMapping, inspect_logs, lm_eval_logs
from poisson_prove.importers._writer import write_import
from poisson_prove.render.json import IMPORT_SCHEMA, dumps
from poisson_prove.store.runs import RunStore

HELP = "store Inspect AI or lm-evaluation-harness logs as a run, to diff them"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "import",
        parents=[parent],
        help=HELP,
        description="Read eval logs into one run of the store: a condition per task (plus model and "
        "task args when they vary among the logs), an episode per sample and epoch, the outcome from "
        "the score. Two imports of the same task pair on (sample, epoch): diff uses McNemar.",
    )
    tools = parser.add_subparsers(dest="tool", metavar="TOOL", required=True, parser_class=type(parser))
    inspect = tools.add_parser("inspect", parents=[parent], help="Inspect AI logs (.eval, .json)")
    inspect.add_argument("paths", nargs="+", metavar="PATH", help="log files or folders of logs")
    inspect.add_argument(
        "--scorer", metavar="NAME", help="the scorer whose value is the outcome (default: the first)"
    )
    inspect.add_argument(
        "--t",
        choices=("none", "messages", "tokens"),
        default="none",
        help="the episode time: none (every sample 1), messages, or tokens of the sample",
    )
    lm_eval = tools.add_parser("lm-eval", parents=[parent], help="lm-evaluation-harness --log_samples output")
    lm_eval.add_argument(
        "paths", nargs="+", metavar="PATH", help="samples_*.jsonl files or their --output_path"
    )
    lm_eval.add_argument(
        "--metric", metavar="NAME", help="the 0/1 metric that is the outcome (default: the first)"
    )
    for sub in (inspect, lm_eval):
        sub.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="VALUE=OUTCOME",
            help="score value to outcome, over the defaults C/1/true=correct I/0/false=incorrect "
            "P=partial N=incorrect (repeatable)",
        )
        sub.add_argument("--name", help="the run's name (default: <tool> <date> <letter>)")
        sub.add_argument("--json", action="store_true", help="print what was stored as one JSON document")
        sub.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    mapping = OutcomeMapping().with_overrides(args.map)
    store = RunStore(args.store)
    if args.tool == "inspect":
        files = inspect_logs.find_logs(args.paths)
        samples = inspect_logs.read_samples(files, mapping, scorer=args.scorer, t=args.t)
        options = {"scorer": args.scorer, "t": args.t}
        t_unit = {"none": "sample", "messages": "messages", "tokens": "tokens"}[args.t]
    else:
        files = lm_eval_logs.find_logs(args.paths)
        samples = lm_eval_logs.read_samples(files, mapping, metric=args.metric)
        options, t_unit = {"metric": args.metric}, "sample"
    result: ImportResult = write_import(
        store,
        tool=args.tool,
        samples=samples,
        sources=files,
        mapping=mapping,
        options=options,
        t_unit=t_unit,
        name=args.name,
    )
    if args.json:
        sys.stdout.write(
            dumps(
                {
                    "schema": IMPORT_SCHEMA,
                    "run_id": result.run.run_id,
                    "name": result.run.name,
                    "created": result.created,
                    "episodes": result.episodes,
                    "errored": result.errored,
                    "conditions": result.conditions,
                    "paired_with": result.run.manifest.get("paired_with_name"),
                    "files": [str(f) for f in files],
                }
            )
        )
        return 0
    name = result.run.name
    if not result.created:
        sys.stdout.write(f'already imported: these logs are run "{name}"; nothing written\n')
        return 0
    sys.stdout.write(
        f'imported {len(files)} log{"" if len(files) == 1 else "s"} as run "{name}": '
        f"{result.episodes:,} episodes ({result.errored:,} errored) in {result.conditions} "
        f"condition{'' if result.conditions == 1 else 's'}\n"
    )
    if result.paired_with:
        sys.stdout.write(f'paired with "{result.paired_with}" on (sample, epoch)\n')
        sys.stdout.write(f'next: poisson-prove diff "{result.paired_with}" "{name}"\n')
    else:
        sys.stdout.write("next: import the logs after your change the same way, then: poisson-prove diff\n")
    return 0
