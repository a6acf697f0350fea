"""`poisson-prove init --example | --benchmark [--force] [PATH]`: write an example's sweep spec
(the benchmark's with its questions.jsonl beside it)."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from poisson_prove.errors import ProveError, ProveExit

HELP = "write a sweep spec (prove.toml) for the example agent"
#: The benchmark example's cases, written beside its spec (the spec reads them from there).
BENCHMARK_CASES = "questions.jsonl"


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "init",
        parents=[parent],
        help=HELP,
        description="Write prove.toml, the sweep spec of the example agent "
        "(poisson_prove.examples.mock_agent), or with --benchmark the benchmark example's "
        f"(poisson_prove.examples.mock_benchmark, over the 120 cases of {BENCHMARK_CASES}, "
        "written beside it), ready for `poisson-prove sweep`.",
    )
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        default="prove.toml",
        help="where to write the spec; a folder gets PATH/prove.toml (default: ./prove.toml)",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument("--example", action="store_true", help="write the example agent's spec")
    which.add_argument(
        "--benchmark",
        action="store_true",
        help=f"write the benchmark example's spec and its cases ({BENCHMARK_CASES}, beside the spec)",
    )
    p.add_argument("--force", action="store_true", help="overwrite files that are already there")
    p.set_defaults(func=run)


def _shipped(name: str) -> str:
    return resources.files("poisson_prove.examples").joinpath(name).read_text(encoding="utf-8")


def example_spec() -> str:
    """The example's prove.toml, as shipped in the package."""
    return _shipped("prove.toml")


def benchmark_files() -> dict[str, str]:
    """The benchmark example's spec and cases, as shipped in the package."""
    return {"spec": _shipped("benchmark.toml"), BENCHMARK_CASES: _shipped(BENCHMARK_CASES)}


def run(args: argparse.Namespace) -> int:
    if not (args.example or args.benchmark):
        raise ProveError(
            "init writes the example's spec only: add --example",
            suggestions=["poisson-prove init --example", "poisson-prove init --benchmark"],
            exit_code=ProveExit.USAGE,
        )
    flag = "--benchmark" if args.benchmark else "--example"
    target = Path(args.path)
    if target.is_dir():
        target = target / "prove.toml"
    files = {target: example_spec()}
    if args.benchmark:
        shipped = benchmark_files()
        files = {target: shipped["spec"], target.parent / BENCHMARK_CASES: shipped[BENCHMARK_CASES]}
    there = [path for path in files if path.exists()]
    if there and not args.force:
        raise ProveError(
            f"{' and '.join(str(path) for path in there)} already exist{'s' if len(there) == 1 else ''}; "
            "nothing was written",
            suggestions=[
                f"poisson-prove init {flag} --force {args.path}".rstrip()
                if args.path != "prove.toml"
                else f"poisson-prove init {flag} --force"
            ],
        )
    if not target.parent.is_dir():
        raise ProveError(f"no folder {target.parent} to write {target.name} in")
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    if args.benchmark:
        print(
            f"wrote {target} and {target.parent / BENCHMARK_CASES}: the benchmark example's sweep spec "
            "(120 cases x 3 replicates)"
        )
    else:
        print(f"wrote {target}: the example agent's sweep spec (9 cells x 194 replicates)")
    print("next: poisson-prove sweep" + ("" if target == Path("prove.toml") else f" {target}"))
    return 0
