"""`proveai baseline create/list/show/refresh`: named, versioned trace sets."""

from __future__ import annotations

import argparse
import sys

from proveai.cli.status import add_actions, add_repeatable, add_traces_option, parse_filters
from proveai.store import Store, default_traces_dir
from proveai.store.artifacts import Baseline

HELP = "named, versioned trace sets: create / list / show / refresh"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    actions = add_actions(subparsers, parent, "baseline", HELP, run)
    create = actions.add_parser("create", parents=[parent], help="snapshot the traces a filter selects")
    create.add_argument("name")
    add_repeatable(
        create, "--filter", "KEY=VALUE", "repeatable, AND-ed: outcome, version, agent, detection, since"
    )
    add_traces_option(create)
    actions.add_parser("list", parents=[parent], help="every baseline with its version and size")
    show = actions.add_parser("show", parents=[parent], help="one baseline's filter and trace ids")
    show.add_argument("name", help="NAME or NAME@VERSION")
    refresh = actions.add_parser("refresh", parents=[parent], help="re-apply the filter as a new version")
    refresh.add_argument("name")


def run(args: argparse.Namespace) -> int:
    store = Store(".")
    out = sys.stdout
    if args.action == "create":
        traces = args.traces or str(default_traces_dir())
        baseline = Baseline.create(args.name, store, traces, parse_filters(args.filter))
        out.write(
            f"Wrote baseline '{baseline.name}' v{baseline.version} — {len(baseline.trace_ids)} trace(s)"
            f" → {Baseline.path_for(baseline.name, store)}\n"
        )
    elif args.action == "refresh":
        before = Baseline.load(args.name, store)
        after = before.refresh(store)
        added = len(set(after.trace_ids) - set(before.trace_ids))
        removed = len(set(before.trace_ids) - set(after.trace_ids))
        out.write(
            f"Refreshed baseline '{after.name}' v{before.version} → v{after.version} — "
            f"{len(after.trace_ids)} trace(s) (+{added} −{removed})\n"
        )
    elif args.action == "list":
        baselines = Baseline.list(store)
        if not baselines:
            out.write(f"no baselines in {store.baselines_dir}\n")
            return 0
        for b in baselines:
            what = " ".join(f"{k}={v}" for k, v in b.filter.items()) or "(all traces)"
            out.write(f"{b.name}  v{b.version}  {len(b.trace_ids)} trace(s)  {what}  updated {b.updated}\n")
    else:
        b = Baseline.load(args.name, store)
        what = " ".join(f"{k}={v}" for k, v in b.filter.items()) or "(all traces)"
        out.write(f"baseline {b.name} v{b.version}\n")
        out.write(
            f"  filter:  {what}\n  traces:  {b.traces_dir}\n  created: {b.created}\n  updated: {b.updated}\n"
        )
        out.write(f"  {len(b.trace_ids)} trace(s):\n")
        out.writelines(f"    {trace_id}\n" for trace_id in b.trace_ids)
        if b.history:
            versions = ", ".join(f"v{h.get('version')}" for h in b.history)
            out.write(f"  earlier versions: {versions} (use {b.name}@N)\n")
    return 0
