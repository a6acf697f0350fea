"""`poisson-prove init --example [--force] [PATH]`: write the example's sweep spec."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from poisson_prove.errors import ProveError, ProveExit

HELP = "write a sweep spec (prove.toml) for the example agent"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "init",
        parents=[parent],
        help=HELP,
        description="Write prove.toml, the sweep spec of the example agent "
        "(poisson_prove.examples.mock_agent), ready for `poisson-prove sweep`.",
    )
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        default="prove.toml",
        help="where to write the spec; a folder gets PATH/prove.toml (default: ./prove.toml)",
    )
    p.add_argument("--example", action="store_true", help="write the example agent's spec")
    p.add_argument("--force", action="store_true", help="overwrite a file that is already there")
    p.set_defaults(func=run)


def example_spec() -> str:
    """The example's prove.toml, as shipped in the package."""
    return resources.files("poisson_prove.examples").joinpath("prove.toml").read_text(encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if not args.example:
        raise ProveError(
            "init writes the example's spec only: add --example",
            suggestions=["poisson-prove init --example"],
            exit_code=ProveExit.USAGE,
        )
    target = Path(args.path)
    if target.is_dir():
        target = target / "prove.toml"
    if target.exists() and not args.force:
        raise ProveError(
            f"{target} already exists; nothing was written",
            suggestions=[
                f"poisson-prove init --example --force {args.path}".rstrip()
                if args.path != "prove.toml"
                else "poisson-prove init --example --force"
            ],
        )
    if not target.parent.is_dir():
        raise ProveError(f"no folder {target.parent} to write {target.name} in")
    target.write_text(example_spec(), encoding="utf-8")
    print(f"wrote {target}: the example agent's sweep spec (9 cells x 194 replicates)")
    print("next: poisson-prove sweep" + ("" if target == Path("prove.toml") else f" {target}"))
    return 0
