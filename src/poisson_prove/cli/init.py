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
#: `init --example NAME`: the shipped spec and what the done line says it is.
EXAMPLES = {
    "agent": ("prove.toml", "the example agent's sweep spec (9 cells x 194 replicates)"),
    "pipeline": (
        "pipeline.toml",
        "the pipeline example's sweep spec (classify -> draft -> qa_check; 3 cells x 300 replicates)",
    ),
}


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
    which.add_argument(
        "--example",
        nargs="?",
        const="agent",
        metavar="NAME",
        help="write an example's spec: agent (the default) or pipeline (three proveai @monitor "
        "agents, classify -> draft -> qa_check, and a patched twin whose draft prompt changed)",
    )
    which.add_argument(
        "--benchmark",
        action="store_true",
        help=f"write the benchmark example's spec and its cases ({BENCHMARK_CASES}, beside the spec)",
    )
    p.add_argument("--force", action="store_true", help="overwrite files that are already there")
    p.set_defaults(func=run)


def _shipped(name: str) -> str:
    return resources.files("poisson_prove.examples").joinpath(name).read_text(encoding="utf-8")


def example_spec(name: str = "agent") -> str:
    """An example's prove.toml, as shipped in the package (EXAMPLES names them)."""
    return _shipped(EXAMPLES[name][0])


def benchmark_files() -> dict[str, str]:
    """The benchmark example's spec and cases, as shipped in the package."""
    return {"spec": _shipped("benchmark.toml"), BENCHMARK_CASES: _shipped(BENCHMARK_CASES)}


def run(args: argparse.Namespace) -> int:
    if args.example is not None and args.example not in EXAMPLES:
        if args.path != "prove.toml":
            raise ProveError(
                f'unknown example "{args.example}"; the examples are {", ".join(EXAMPLES)}',
                suggestions=[f"poisson-prove init --example pipeline {args.path}"],
                exit_code=ProveExit.USAGE,
            )
        # `init --example FOLDER` (before examples had names): the value is the path
        args.path, args.example = args.example, "agent"
    if not (args.example or args.benchmark):
        raise ProveError(
            "init writes the example's spec only: add --example",
            suggestions=["poisson-prove init --example", "poisson-prove init --benchmark"],
            exit_code=ProveExit.USAGE,
        )
    named = "" if args.example in (None, "agent") else f" {args.example}"
    flag = "--benchmark" if args.benchmark else f"--example{named}"
    target = Path(args.path)
    if target.is_dir():
        target = target / "prove.toml"
    files = {target: example_spec(args.example or "agent")}
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
        print(f"wrote {target}: {EXAMPLES[args.example][1]}")
    print("next: poisson-prove sweep" + ("" if target == Path("prove.toml") else f" {target}"))
    return 0
