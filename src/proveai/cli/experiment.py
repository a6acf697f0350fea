"""`proveai experiment new/list/show`: named override sets."""

from __future__ import annotations

import argparse
import sys

from proveai.cli.run import parse_assignments
from proveai.cli.status import add_actions, add_repeatable
from proveai.store import Store
from proveai.store.artifacts import Experiment

HELP = "named override sets: new / list / show"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    actions = add_actions(subparsers, parent, "experiment", HELP, run)
    new = actions.add_parser("new", parents=[parent], help="save overrides under a name")
    new.add_argument("name")
    add_repeatable(
        new,
        "--override",
        "AGENT=PATH",
        "repeatable; PATH's contents become AGENT's system prompt (stored in the experiment)",
    )
    add_repeatable(
        new, "--model", "AGENT=MODEL", "repeatable; replay AGENT on MODEL instead of its captured one"
    )
    new.add_argument("--description", default=None, help="one line saying what the experiment tries")
    actions.add_parser("list", parents=[parent], help="every experiment and the agents it overrides")
    show = actions.add_parser("show", parents=[parent], help="one experiment's overrides")
    show.add_argument("name")


def run(args: argparse.Namespace) -> int:
    store = Store(".")
    out = sys.stdout
    if args.action == "new":
        experiment = Experiment.new(
            args.name,
            store,
            parse_assignments("--override", args.override, "PATH"),
            parse_assignments("--model", args.model, "MODEL"),
            args.description,
        )
        out.write(
            f"Wrote experiment '{experiment.name}' — {len(experiment.overrides)} agent override(s)"
            f" → {Experiment.path_for(experiment.name, store)}\n"
        )
    elif args.action == "list":
        experiments = Experiment.list(store)
        if not experiments:
            out.write(f"no experiments in {store.experiments_dir}\n")
            return 0
        for e in experiments:
            out.write(f"{e.name}  overrides: {', '.join(sorted(e.overrides))}  created {e.created}\n")
    else:
        e = Experiment.load(args.name, store)
        out.write(f"experiment {e.name}\n  created: {e.created}\n")
        if e.description:
            out.write(f"  description: {e.description}\n")
        for agent, settings in sorted(e.overrides.items()):
            out.write(f"  {agent}:\n")
            if "model" in settings:
                out.write(f"    model: {settings['model']}\n")
            if "prompt" in settings:
                source = settings.get("prompt_file", "inline")
                sha = str(settings.get("prompt_sha256", ""))[:12]
                out.write(
                    f"    prompt: from {source} (sha256 {sha}…), {len(str(settings['prompt']))} chars\n"
                )
                first = str(settings["prompt"]).strip().splitlines()[:1]
                if first:
                    out.write(f"      {first[0][:100]}\n")
    return 0
