"""`poisson-prove import inspect|lm-eval PATH...`: eval logs of other tools as one stored run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from poisson_prove.importers import ImportResult, OutcomeMapping, inspect_logs, lm_eval_logs
from poisson_prove.importers._writer import import_logs
from poisson_prove.render.json import IMPORT_SCHEMA, dumps
from poisson_prove.store.runs import RunStore

HELP = "store Inspect AI or lm-evaluation-harness logs as a run, to diff them"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "import",
        parents=[parent],
        help=HELP,
        description="Read eval logs into one run of the store: each task (per scorer) a benchmark "
        "whose cases are its samples (a condition per sample; model and task args are axes when they "
        "vary among the logs), an episode per sample and epoch, the outcome from the score. Two "
        "imports of the same task pair on (sample, epoch); the paired test counts by sample.",
    )
    tools = parser.add_subparsers(dest="tool", metavar="TOOL", required=True, parser_class=type(parser))
    inspect = tools.add_parser("inspect", parents=[parent], help="Inspect AI logs (.eval, .json)")
    inspect.add_argument("paths", nargs="+", metavar="PATH", help="log files or folders of logs")
    inspect.add_argument(
        "--scorer",
        action="append",
        default=[],
        metavar="NAME",
        help="the scorer whose value is the outcome (default: each log's first); repeat it to import "
        "several, each its own group",
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
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="the 0/1 metric that is the outcome (default: the first); repeat it to import several, "
        "each its own group",
    )
    lm_eval.add_argument(
        "--unpaired",
        action="store_true",
        help="a salt of its own: never paired with other imports (for documents that changed)",
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
        scorers = list(dict.fromkeys(args.scorer))
        result: ImportResult = import_logs(
            store,
            tool="inspect",
            files=files,
            read=lambda: inspect_logs.read_logs(files, mapping, scorers=scorers, t=args.t),
            mapping=mapping,
            options={"scorers": scorers, "t": args.t},
            t_unit={"none": "sample", "messages": "messages", "tokens": "tokens"}[args.t],
            name=args.name,
        )
    else:
        files = lm_eval_logs.find_logs(args.paths)
        metrics = list(dict.fromkeys(args.metric))
        result = import_logs(
            store,
            tool="lm-eval",
            files=files,
            read=lambda: lm_eval_logs.read_logs(files, mapping, metrics=metrics),
            mapping=mapping,
            options={"metrics": metrics, "unpaired": args.unpaired},
            t_unit="sample",
            name=args.name,
            unpaired=args.unpaired,
            check_partner=lm_eval_logs.check_same_documents,
        )
    name = result.run.name
    if result.replaced:
        sys.stderr.write(
            f'warning: run "{result.replaced}" was an import of these logs stopped before it finished; '
            "it is replaced\n"
        )
    for log in result.unfinished:
        stopped = f"{log.status}: {log.message}" if log.message else log.status
        left_out = f", {_count(log.cancelled, 'cancelled sample')} left out" if log.cancelled else ""
        sys.stderr.write(
            f"warning: {log.path} is an eval that did not finish (status {stopped}): "
            f"{log.present - log.cancelled:,} of its {log.planned:,} samples are imported{left_out}; "
            f'run "{name}" is partial\n'
        )
    cancelled = result.cancelled - sum(log.cancelled for log in result.unfinished)
    if cancelled:
        sys.stderr.write(
            f"warning: {cancelled:,} sample{'' if cancelled == 1 else 's'} cancelled by the eval "
            "(not the agent's errors) left out\n"
        )
    if args.json:
        sys.stdout.write(dumps(_document(result, files)))
        return 0
    if not result.created:
        sys.stdout.write(f'already imported: these logs are run "{name}"; nothing written\n')
        return 0
    sys.stdout.write(
        f'imported {len(files)} log{"" if len(files) == 1 else "s"} as run "{name}": '
        f"{result.episodes:,} episodes ({result.errored:,} errored) of {_count(result.cases, 'sample')} "
        f"in {_count(result.groups, 'group')}\n"
    )
    if result.unfinished and args.tool == "inspect":
        sys.stdout.write(
            f"next: inspect eval-retry {result.unfinished[0].path}, then import the log it writes\n"
        )
    if result.paired_with:
        on = "on (sample, epoch)" if args.tool == "inspect" else "on doc_id, where doc_hash agrees"
        sys.stdout.write(f'paired with "{result.paired_with}" {on}\n')
        sys.stdout.write(f'next: poisson-prove diff "{result.paired_with}" "{name}"\n')
    else:
        sys.stdout.write("next: import the logs after your change the same way, then: poisson-prove diff\n")
    return 0


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _document(result: ImportResult, files: list[Path]) -> dict[str, Any]:
    return {
        "schema": IMPORT_SCHEMA,
        "run_id": result.run.run_id,
        "name": result.run.name,
        "created": result.created,
        "status": result.run.status,
        "episodes": result.episodes,
        "errored": result.errored,
        "conditions": result.conditions,
        "groups": result.groups,
        "cases": result.cases,
        "cancelled": result.cancelled,
        "unfinished": [
            {"file": str(log.path), "status": log.status, "planned": log.planned, "present": log.present}
            for log in result.unfinished
        ],
        "replaced": result.replaced,
        "paired_with": result.run.manifest.get("paired_with_name"),
        "files": [str(f) for f in files],
    }
