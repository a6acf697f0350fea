"""`proveai calibrate`: per-agent Tier-2 similarity thresholds from known-good traces."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from proveai.cli.status import add_traces_option, parse_filters
from proveai.diff.tier2 import calibrate
from proveai.errors import ProveAIError
from proveai.providers.embedding import LocalEmbeddingAdapter, OpenAICompatibleEmbeddingAdapter
from proveai.store import default_traces_dir
from proveai.store.traces.reading import iter_traces

HELP = "per-agent Tier-2 similarity thresholds from known-good traces"
LOCAL_NAMES = ("local", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "calibrate",
        parents=[parent],
        help=HELP,
        description=HELP + ". attribute_edges reads the output file automatically when it is in the "
        "working directory as proveai.calibration.json.",
    )
    add_traces_option(p)
    p.add_argument(
        "--out",
        metavar="PATH",
        type=Path,
        default=Path("proveai.calibration.json"),
        help="where to write the thresholds (default proveai.calibration.json)",
    )
    p.add_argument(
        "--model",
        metavar="MODEL",
        default="local",
        help="embedding model: 'local' (all-MiniLM-L6-v2, offline) or a model name served at "
        "$PROVEAI_EMBEDDER_BASE_URL / OpenAI (e.g. text-embedding-3-small)",
    )
    p.add_argument(
        "--filter",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="which traces count as known-good (default outcome=good)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.traces) if args.traces else default_traces_dir()
    if not root.is_dir():
        raise ProveAIError(f"no trace store at {root}", suggestions=("point --traces at the store folder",))
    filters = parse_filters(args.filter if args.filter is not None else ["outcome=good"])
    traces = list(iter_traces(root, filters))
    if not traces:
        what = " ".join(f"{k}={v}" for k, v in filters.items())
        raise ProveAIError(
            f"no traces in {root} match {what}: nothing to calibrate on",
            suggestions=("label traces with checks or record_outcome, or pass another --filter",),
        )
    embedder: LocalEmbeddingAdapter | OpenAICompatibleEmbeddingAdapter
    if args.model in LOCAL_NAMES:
        embedder = LocalEmbeddingAdapter()
    else:
        embedder = OpenAICompatibleEmbeddingAdapter(model=args.model)
    report = calibrate(traces, embedder)
    path = report.write(args.out)
    out = sys.stdout
    out.write(
        f"Calibrated {len(report.agents)} agent(s) on {len(traces)} trace(s) with {report.model} → {path}\n"
    )
    for name, t in sorted(report.agents.items()):
        out.write(
            f"  {name}: unchanged > {t.unchanged_threshold:.3f}, regressed < {t.regressed_threshold:.3f}"
            f"  ({t.n_outputs} outputs, {t.n_pairs} pairs)\n"
        )
    skipped = sorted({a for t in traces for a in t.agents} - set(report.agents))
    if skipped:
        out.write(
            f"  kept defaults (0.99 / 0.40) for: {', '.join(skipped)} (fewer than 2 distinct outputs)\n"
        )
    return 0
