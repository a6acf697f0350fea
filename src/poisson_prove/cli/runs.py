"""`poisson-prove runs`: one row per stored run."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

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


def run_rows(store_root: Any) -> list[dict[str, Any]]:
    from poisson_prove.store import RunStore

    store = RunStore(store_root)
    rows = []
    for info in store.runs():
        m = info.manifest
        counts = m.get("counts") or {}
        if info.status == "partial":
            # A killed sweep leaves the manifest's counts behind its batch files: count those.
            table = info.read_episodes(["outcome"])
            counts = {**counts, "done": table.num_rows, "errored": table.column("outcome").null_count}
        rows.append(
            {
                "name": info.name,
                "id": info.run_id,
                "status": info.status,
                "done": int(counts.get("done", 0)),
                "planned": int(counts.get("planned", 0)),
                "errored": int(counts.get("errored", 0)),
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
        row["status"],
        f"{row['done']:,}/{row['planned']:,}",
        f"{row['errored']:,}",
        (row["salt"] or "")[:8],
        row["paired_with_name"] or "-",
        row["created"],
    ]


def run(args: argparse.Namespace) -> int:
    from poisson_prove.cli._console import is_pretty
    from poisson_prove.store import RunStore, resolve_store_root

    root = resolve_store_root(args.store)
    rows = run_rows(root)
    for path, why in RunStore(root).unreadable():
        sys.stderr.write(f"warning: {path} cannot be read ({why}); that run is left out\n")
    if args.json:
        sys.stdout.write(
            json.dumps({"schema": "poisson-prove.runs/1", "store": str(root), "runs": rows}, indent=2) + "\n"
        )
        return 0
    if not rows:
        print(f"no runs in the store {root}")
        print("next: poisson-prove sweep --yes")
        return 0
    table = [_cells(r) for r in rows]
    if is_pretty(args):
        from rich.console import Console
        from rich.table import Table

        grid = Table(title=f"runs in {root}")
        for name in COLUMNS:
            grid.add_column(name, justify="right" if name in ("done/planned", "no outcome") else "left")
        for cells in table:
            grid.add_row(*cells)
        Console().print(grid)
        return 0
    widths = [max(len(COLUMNS[i]), *(len(c[i]) for c in table)) for i in range(len(COLUMNS))]
    print("  ".join(h.ljust(w) for h, w in zip(COLUMNS, widths, strict=True)).rstrip())
    for cells in table:
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    return 0
