"""`poisson-prove runs`: one row per stored run."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.render.json import RUNS_SCHEMA, dumps
from poisson_prove.store.checks import check_unique
from poisson_prove.store.runs import RunStore, resolve_store_root
from prove_common.console import is_pretty
from prove_common.tables import Column, Table, draw_table

HELP = "list the runs in the store"
COLUMNS = ("name", "id", "status", "done/planned", "no outcome", "salt", "paired with", "created")


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "runs",
        parents=[parent],
        help=HELP,
        description="List the runs in the store, oldest first: name, id, status, rollouts done of "
        "planned, rows without an outcome, salt, the run paired with, when it was created.",
    )
    p.add_argument("--json", action="store_true", help="print the runs as one JSON document")
    p.set_defaults(func=run)


def run_rows(store_root: Any, refusals: list[ProveError] | None = None) -> list[dict[str, Any]]:
    """One row per listable run. A run whose batch files cannot be trusted (unreadable, or a
    copied batch storing episodes twice) is left out and its error added to `refusals`."""
    store = RunStore(store_root)
    rows = []
    for info in store.runs():
        m = info.manifest
        counts = m.get("counts") or {}
        try:
            if info.status == "partial":
                # A killed sweep leaves the manifest's counts behind its batch files: count those.
                table = info.read_episodes(["cell", "replicate", "outcome"])
                check_unique(info, table)
                counts = {**counts, "done": table.num_rows, "errored": table.column("outcome").null_count}
            elif info.unlisted_batches():  # a file no event records writing: a copy?
                check_unique(info)
        except ProveError as err:
            if refusals is None:
                raise
            refusals.append(err)
            continue
        rows.append(
            {
                "name": info.name,
                "id": info.run_id,
                "status": info.status,
                "done": int(counts.get("done", 0)),
                "planned": int(counts.get("planned", 0)),
                "errored": int(counts.get("errored", 0)),
                # --stop-when-settled: planned rollouts not run because their condition settled
                "settled_skipped": int(counts.get("settled_skipped", 0) or 0),
                "salt": m.get("salt"),
                "paired_with": m.get("paired_with"),
                "paired_with_name": m.get("paired_with_name"),
                "target": m.get("target"),
                "created": info.created,
            }
        )
    return rows


def _cells(row: dict[str, Any]) -> list[str]:
    return [
        row["name"],
        row["id"],
        f"{row['status']}, settled" if row.get("settled_skipped") else row["status"],
        f"{row['done']:,}/{row['planned']:,}",
        f"{row['errored']:,}",
        (row["salt"] or "")[:8],
        row["paired_with_name"] or "-",
        row["created"],
    ]


def run(args: argparse.Namespace) -> int:
    root = resolve_store_root(args.store)
    store = RunStore(root)
    store.check_usable()
    refusals: list[ProveError] = []
    rows = run_rows(root, refusals)
    for path, why in store.unreadable():
        sys.stderr.write(f"warning: {path} cannot be read ({why}); that run is left out\n")
    code = _report_refusals(refusals)
    if args.json:
        document: dict[str, Any] = {"schema": RUNS_SCHEMA, "store": str(root), "runs": rows}
        if refusals:
            document["refused"] = [{"message": e.message, "next": list(e.suggestions)} for e in refusals]
        sys.stdout.write(dumps(document))
        return code
    if not rows:
        print(f"no runs in the store {root}")
        if not refusals:
            print("next: poisson-prove sweep --yes")
        return code
    cells = tuple(tuple(_cells(r)) for r in rows)
    if is_pretty(args):
        # Rich's own look for this listing (heavy head, centred title); every cell is text, so a
        # run named like markup ("[/x]") prints as itself
        numbers = frozenset(i for i, name in enumerate(COLUMNS) if name in ("done/planned", "no outcome"))
        grid = Table(
            f"runs in {root}", COLUMNS, cells, right=numbers,
            columns={i: Column(no_wrap=False) for i in range(len(COLUMNS))},
            box="HEAVY_HEAD", title_justify="center", pad_edge=True,
        )
        draw_table(grid, pretty=True)
        return code
    draw_table(Table(None, COLUMNS, cells), pretty=False)
    return code


def _report_refusals(refusals: list[ProveError]) -> int:
    """Runs left out because their batch files cannot be trusted: the listing still shows the
    others, then one `error:` line (the first) and `warning:` lines for the rest; exit 1."""
    if not refusals:
        return ProveExit.OK
    for extra in refusals[1:]:
        sys.stderr.write(f"warning: {extra.message}; that run is left out\n")
    first = refusals[0]
    sys.stderr.write(f"error: {first.message}\n")
    for suggestion in first.suggestions:
        sys.stderr.write(f"next: {suggestion}\n")
    return ProveExit.REFUSED
