"""The `proveai run` loop as a library call: select traces, replay, attribute, write the run folder.

Everything that can be refused (names, files, selections) is checked before any model call and
before anything is written; the run folder is written only once every trace was replayed.
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove_common.jsonio import utc_now_iso
from prove_common.suggest import did_you_mean
from proveai.cache import ResponseCache, default_cache
from proveai.diff.judge import judge_model_name
from proveai.diff.tier2 import load_calibration
from proveai.diff.verdict import EdgeVerdict
from proveai.errors import ProveAIError, ProveAIExit
from proveai.providers.embedding import Embedder, LocalEmbeddingAdapter, OpenAICompatibleEmbeddingAdapter
from proveai.replay.attribution import attribute_edges
from proveai.replay.engine import ReplayedTrace, replay_trace
from proveai.store import Store
from proveai.store.artifacts import Baseline, Experiment, prompt_override
from proveai.store.runs import Run, overrides_summary
from proveai.store.traces.load import load_trace
from proveai.store.traces.reading import iter_traces, validate_filter
from proveai.traces.trace import Trace

EMBEDDERS = ("none", "local", "openai")
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class RunRequest:
    store: Store
    traces_dir: Path
    filters: dict[str, str] = field(default_factory=dict)
    baseline: str | None = None
    experiment: str | None = None
    override_files: dict[str, str] = field(default_factory=dict)
    counterfactual: tuple[str, ...] = ()
    hold_at: tuple[str, ...] = ()
    propagate: bool = False
    reinvoke: bool = True  # False: never call a captured function (--no-reinvoke)
    report: Path | None = None
    embedder: str = "none"
    judge_model: str | None = None
    no_cache: bool = False
    strict_judge: bool = False
    jobs: int = 4
    argv: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunMetrics:
    """What one run counted: verdicts per status and per edge, model calls, latency, tokens.

    `to_dict()` is metrics.json (docs/proveai-replay.md), key for key.
    """

    traces: int
    edges: int
    by_status: dict[str, int]
    by_edge: dict[str, dict[str, int]]
    regression_rate_by_edge: dict[str, float]
    live_spans: int
    cached_spans: int
    cache_hits: int
    cache_misses: int
    replay_latency_ms: float
    tokens: dict[str, int]
    unjudged: int  # mismatches the judge could not decide
    unjudged_reasons: list[str]
    reinvoked: dict[str, int]  # agent -> spans re-executed by calling the captured function
    not_reexecuted: dict[str, str]  # agent -> why its changed inputs could not be re-executed

    @property
    def regressed(self) -> int:
        return self.by_status.get("regressed", 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "edges": self.edges,
            "by_status": dict(self.by_status),
            "by_edge": {edge: dict(counts) for edge, counts in self.by_edge.items()},
            "regression_rate_by_edge": dict(self.regression_rate_by_edge),
            "live_spans": self.live_spans,
            "cached_spans": self.cached_spans,
            "cache": {"hits": self.cache_hits, "misses": self.cache_misses},
            "replay_latency_ms": self.replay_latency_ms,
            "tokens": dict(self.tokens),
            "unjudged": self.unjudged,
            "unjudged_reasons": list(self.unjudged_reasons),
            "reinvoked": dict(self.reinvoked),
            "not_reexecuted": dict(self.not_reexecuted),
        }


@dataclass(frozen=True)
class RunResult:
    """A finished run: its folder, the replayed pairs, the metrics and the exit code.

    `report_paths` are where the HTML report belongs (the run folder's report.html, then
    --report's path); the caller writes them through proveai.report.
    """

    run: Run
    pairs: list[tuple[Trace, ReplayedTrace]]
    metrics: RunMetrics
    report_paths: tuple[Path, ...]
    exit_code: int
    judge_model: str
    embedder: str  # as recorded in the manifest: "none", "local:<model>", ...

    @property
    def verdicts(self) -> list[tuple[str, EdgeVerdict]]:
        return [(trace.trace_id, v) for trace, replayed in self.pairs for v in replayed.edge_verdicts]


def _select_traces(request: RunRequest) -> tuple[list[Trace], dict[str, Any] | None]:
    if request.baseline:
        if request.filters:
            raise ProveAIError(
                "--baseline and --filter cannot be combined: a baseline already fixes its trace set",
                suggestions=("drop --filter, or create another baseline with that filter",),
            )
        baseline = Baseline.load(request.baseline, request.store)
        root = Path(baseline.traces_dir)
        traces = []
        for trace_id in baseline.trace_ids:
            path = root / f"{trace_id}.json"
            if not path.exists():
                raise ProveAIError(
                    f"baseline {baseline.name!r} v{baseline.version} lists trace {trace_id}, "
                    f"which is no longer in {root}",
                    suggestions=(f"proveai baseline refresh {baseline.name}",),
                )
            traces.append(load_trace(path))
        return traces, {"name": baseline.name, "version": baseline.version}
    try:
        validate_filter(request.filters)
    except ValueError as exc:
        raise ProveAIError(f"--filter: {exc}") from None
    if not request.traces_dir.is_dir():
        raise ProveAIError(
            f"no trace store at {request.traces_dir}",
            suggestions=("capture traces with FileExporter first, or point --traces at the store",),
        )
    traces = list(iter_traces(request.traces_dir, request.filters))
    if request.hold_at and not request.filters:
        wanted = set(request.hold_at)
        traces = [t for t in traces if wanted & {s.span_id for s in t.spans}]
    return traces, None


def _check_names(request: RunRequest, traces: Sequence[Trace], overrides: Mapping[str, Any]) -> None:
    known = sorted({a for t in traces for a in t.agents})
    for flag, names in (("--override", list(overrides)), ("--counterfactual", list(request.counterfactual))):
        for name in names:
            if name not in known:
                raise ProveAIError(
                    f"{flag} names unknown agent {name!r}{did_you_mean(name, known)}; "
                    f"known agents: {', '.join(known)}",
                )
    if request.hold_at:
        spans = {s.span_id for t in traces for s in t.spans}
        missing = [s for s in request.hold_at if s not in spans]
        if missing:
            raise ProveAIError(
                f"--hold-at: no span {missing[0]} in the selected trace(s)",
                suggestions=("span ids are the 16-hex spanId values of the trace files",),
            )
    if request.propagate and not (request.counterfactual or request.hold_at):
        raise ProveAIError(
            "--propagate only applies with --counterfactual or --hold-at",
            suggestions=("add --counterfactual AGENT or --hold-at SPAN_ID",),
        )


def _check_report_path(path: Path | None) -> None:
    """--report must name a file we can create: checked before any replay, so a typo never
    costs a run (or leaves a run folder behind a crash)."""
    if path is None:
        return
    if path.name in ("", ".", "..") or path.is_dir():
        raise ProveAIError(
            f"--report {path}: is a folder; give the report file's path",
            suggestions=(f"--report {path / 'report.html'}",),
        )
    for folder in path.parents:  # the nearest existing folder must be a writable folder
        if folder.exists():
            if not folder.is_dir():
                raise ProveAIError(f"--report {path}: {folder} is a file, not a folder")
            if not os.access(folder, os.W_OK | os.X_OK):
                raise ProveAIError(f"--report {path}: cannot write in {folder}")
            return


def _embedder(kind: str) -> Embedder | None:
    if kind == "none":
        return None
    return LocalEmbeddingAdapter() if kind == "local" else OpenAICompatibleEmbeddingAdapter()


def execute_run(request: RunRequest, progress: Progress | None = None) -> RunResult:
    """Replay the selected traces with the overrides, grade every edge, write proveai/runs/<id>/."""
    if request.embedder not in EMBEDDERS:
        raise ProveAIError(f"--embedder must be one of {', '.join(EMBEDDERS)}, not {request.embedder!r}")
    overrides: dict[str, dict[str, Any]] = {}
    if request.experiment:
        overrides.update(Experiment.load(request.experiment, request.store).replay_overrides())
    for agent, file in request.override_files.items():
        settings = prompt_override(agent, file)
        overrides[agent] = {**overrides.get(agent, {}), "prompt": settings["prompt"]}
    _check_report_path(request.report)
    traces, baseline_info = _select_traces(request)
    if not traces:
        what = " ".join(f"{k}={v}" for k, v in request.filters.items())
        if request.hold_at and not what:
            spans = ", ".join(request.hold_at)
            problem = f"no trace in {request.traces_dir} contains span {spans} (--hold-at)"
        else:
            problem = f"no traces in {request.traces_dir}" + (f" match {what}" if what else "")
        raise ProveAIError(problem, suggestions=("proveai status  (what the store holds)",))
    _check_names(request, traces, overrides)
    cache = ResponseCache(enabled=False) if request.no_cache else default_cache()
    judge_model = judge_model_name(request.judge_model)
    embedder = _embedder(request.embedder)
    started = utc_now_iso()
    hits0, misses0 = cache.hits, cache.misses
    calibration = load_calibration()

    def one(trace: Trace) -> tuple[Trace, ReplayedTrace]:
        try:
            replayed = replay_trace(
                trace,
                overrides,
                counterfactual=request.counterfactual or None,
                hold_at=request.hold_at or None,
                propagate=request.propagate,
                cache=cache,
                reinvoke=request.reinvoke,
            )
        except ValueError as exc:  # no provider for a captured model
            raise ProveAIError(
                f"trace {trace.trace_id}: {exc}",
                suggestions=("set PROVEAI_PROVIDER_PATTERN and PROVEAI_PROVIDER_BASE_URL (see docs)",),
            ) from None
        attribute_edges(
            trace, replayed, embedder=embedder, judge_model=judge_model, cache=cache, calibration=calibration
        )
        return trace, replayed

    if progress is not None:
        progress(0, len(traces), "")
    # Traces are independent: replay them on a few threads (model calls are I/O bound); the
    # results keep the selection's order whatever order they finish in.
    results: dict[int, tuple[Trace, ReplayedTrace]] = {}
    with ThreadPoolExecutor(max_workers=max(1, request.jobs)) as pool:
        futures = {pool.submit(one, trace): index for index, trace in enumerate(traces)}
        try:
            for done_count, future in enumerate(as_completed(futures), 1):
                results[futures[future]] = future.result()
                if progress is not None:
                    progress(done_count, len(traces), results[futures[future]][0].trace_id)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    pairs = [results[i] for i in range(len(traces))]
    metrics = run_metrics(pairs, cache.hits - hits0, cache.misses - misses0)
    if metrics.regressed:
        exit_code = ProveAIExit.REGRESSION
    elif request.strict_judge and metrics.unjudged:
        exit_code = ProveAIExit.INCONCLUSIVE  # a mismatch nobody could judge is never a silent pass
    else:
        exit_code = ProveAIExit.OK
    run = Run.create(request.store)
    manifest: dict[str, Any] = {
        "schema": "proveai.run/1",
        "run_id": run.run_id,
        "created": started,
        "finished": utc_now_iso(),
        "argv": list(request.argv),
        "traces_dir": str(request.traces_dir),
        "filters": dict(request.filters),
        "baseline": baseline_info,
        "experiment": request.experiment,
        "overrides": overrides_summary(overrides),
        "counterfactual": list(request.counterfactual),
        "hold_at": list(request.hold_at),
        "propagate": request.propagate,
        "reinvoke": request.reinvoke,
        "embedder": request.embedder if embedder is None else f"{request.embedder}:{embedder.model}",
        "judge_model": judge_model,
        "cache": {"enabled": cache.enabled, "root": str(cache.root)},
        "trace_ids": [t.trace_id for t, _ in pairs],
        "by_status": dict(metrics.by_status),
        "exit_code": exit_code,
        "python": sys.version.split()[0],
    }
    run.write_json(
        "verdicts.json",
        [
            {
                "trace_id": trace.trace_id,
                "verdicts": [v.to_dict() for v in replayed.edge_verdicts],
                "replayed_spans": [
                    {
                        k: v
                        for k, v in r.to_dict().items()
                        if k not in ("messages_sent", "old_output", "new_output")
                    }
                    for r in replayed.replayed_spans
                ],
            }
            for trace, replayed in pairs
        ],
    )
    run.write_json("metrics.json", metrics.to_dict())
    reports = [run.report_path] + ([request.report] if request.report is not None else [])
    manifest["reports"] = [os.fspath(p) for p in reports]
    run.write_json("manifest.json", manifest)
    return RunResult(
        Run(run.run_id, run.path, manifest), pairs, metrics, tuple(reports), exit_code, judge_model,
        manifest["embedder"],
    )


def run_metrics(
    pairs: Sequence[tuple[Trace, ReplayedTrace]], cache_hits: int, cache_misses: int
) -> RunMetrics:
    """Counts per status and per edge, regression rates, live/cached calls, latency and tokens."""
    by_status: Counter[str] = Counter()
    by_edge: dict[str, Counter[str]] = defaultdict(Counter)
    live = cached = 0
    latency = 0.0
    tokens: Counter[str] = Counter()
    unjudged = 0
    reasons: set[str] = set()
    reinvoked: Counter[str] = Counter()
    not_rerun: dict[str, str] = {}  # agent -> why its changed inputs could not be re-executed
    for _, replayed in pairs:
        for verdict in replayed.edge_verdicts:
            if verdict.inconclusive:
                unjudged += 1
                reasons.add(verdict.rationale)
            by_status[verdict.status] += 1
            by_edge[verdict.edge][verdict.status] += 1
        for span in replayed.replayed_spans:
            if span.reinvoked:
                reinvoked[span.agent] += 1
            elif span.held == "no_request" and span.inputs_changed:
                not_rerun.setdefault(span.agent, str(span.note or ""))
            if span.live:
                live += 1
                cached += int(span.cached)
                latency += span.latency_ms
                tokens.update(span.usage)
    return RunMetrics(
        traces=len(pairs),
        edges=sum(by_status.values()),
        by_status=dict(by_status),
        by_edge={edge: dict(counts) for edge, counts in by_edge.items()},
        regression_rate_by_edge={
            edge: round(counts.get("regressed", 0) / sum(counts.values()), 4)
            for edge, counts in by_edge.items()
        },
        live_spans=live,
        cached_spans=cached,
        cache_hits=cache_hits,
        cache_misses=cache_misses,
        replay_latency_ms=round(latency, 3),
        tokens=dict(tokens),
        unjudged=unjudged,
        unjudged_reasons=sorted(reasons),
        reinvoked=dict(reinvoked),
        not_reexecuted=not_rerun,
    )
