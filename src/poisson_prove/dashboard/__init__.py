"""The store dashboard: one self-contained HTML page of runs and comparisons.

`write_dashboard(store)` writes `<store>/dashboard.html` (atomically); `refresh_existing`
rewrites it only when the store already has one (what sweep, diff and check call).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from poisson_prove.dashboard.collect import RunView, run_view, unreadable_view
from poisson_prove.dashboard.comparisons import ComparisonView, comparison_views
from poisson_prove.dashboard.page import render_page
from poisson_prove.dashboard.plots import forest_svg, incidence_svg, pair_incidence_svg, require_matplotlib
from poisson_prove.errors import ProveError
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore
from prove_common.files import clear_stale_temps, write_text_atomic
from prove_common.jsonio import utc_now_iso

DASHBOARD_FILE = "dashboard.html"
DEFAULT_PLOTS = 10  # runs whose incidence curves and failed episodes are drawn, newest first
NEIGHBOURS = 5  # of those, the newest compared with the run before them (the pair picker's)
PAIR_CURVES = 3  # comparisons, first on the page, drawn with their before/after incidence panels


def render_dashboard(
    store: str | os.PathLike[str] | None = None,
    *,
    compared_log: Path | None = None,
    plots: int = DEFAULT_PLOTS,
    refresh: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    pair: tuple[str, str] | None = None,
    served: bool = False,
) -> str:
    """The page as text. `compared_log`: the comparisons log to show past comparisons from;
    `progress(done, total)` is called after each run is read (and drawn); `pair` (before,
    after run ids): a comparison to show first (what `--serve` is asked for with
    `?before=...&after=...`); `served`: the page's pair picker may ask the server for a pair."""
    require_matplotlib()
    runs_store = RunStore(store)
    infos = runs_store.runs()
    first_plotted = max(len(infos) - plots, 0)
    partners = _partners(infos)
    views, incidence, used = [], {}, set()
    for i, info in enumerate(infos):
        plot = i >= first_plotted
        partner = partners.get(info.run_id)
        key = (str(info.path), plot, _run_signature(info), *(_run_signature(partner) if partner else ()))
        used.add(key)
        if key not in _RUN_CACHE:
            try:
                view = run_view(info, plot=plot, partner=partner)
            except ProveError as err:  # a damaged batch: say so on the page, show the rest
                view = unreadable_view(info, err.message)
            svg = incidence_svg(view.curves, view.t_unit, salt=f"run-{view.run_id}") if view.curves else None
            _RUN_CACHE[key] = (view, svg)
        view, svg = _RUN_CACHE[key]
        if progress is not None:
            progress(i + 1, len(infos))
        views.append(view)
        if svg:
            incidence[view.run_id] = svg
    for stale in set(_RUN_CACHE) - used:
        del _RUN_CACHE[stale]  # a run that changed, left the plotted few, or went away
    neighbours = min(plots, NEIGHBOURS)
    comparisons = comparison_views(runs_store.root, compared_log, neighbours=neighbours, requested=pair)
    forests = [
        forest_svg(view.comparison, salt=f"cmp-{i}") if view.comparison else ""
        for i, view in enumerate(comparisons)
    ]
    by_id = {view.run_id: view for view in views}
    pair_curves = [
        _pair_curves(view, by_id, i) if i < PAIR_CURVES else "" for i, view in enumerate(comparisons)
    ]
    written = utc_now_iso()
    return render_page(
        store=str(runs_store.root), written=written, runs=views, comparisons=comparisons,
        forests=forests, incidence=incidence, plotted=plots, refresh=refresh, pair_curves=pair_curves,
        served=served,
    )


def _partners(infos: Sequence[RunInfo]) -> dict[str, RunInfo]:
    """Per run, the run its episodes' "flipped" is measured against: the run it was paired with
    (and, for that baseline, the newest run paired with it), else the run before it."""
    by_id = {info.run_id: info for info in infos}
    partners: dict[str, RunInfo] = {}
    for i, info in enumerate(infos):
        baseline = by_id.get(str(info.manifest.get("paired_with") or ""))
        if baseline is not None and baseline.run_id != info.run_id:
            partners[info.run_id] = baseline
            partners[baseline.run_id] = info  # the newest candidate wins
        elif i and info.run_id not in partners:
            partners[info.run_id] = infos[i - 1]
    return partners


def _pair_curves(view: ComparisonView, runs: dict[str, RunView], index: int) -> str:
    """The comparison's before and after incidence on one panel per condition, when both runs
    were drawn (the plotted runs); else ""."""
    if view.comparison is None:
        return ""
    before, after = runs.get(view.comparison.before.run_id), runs.get(view.comparison.after.run_id)
    if before is None or after is None or not before.curves or not after.curves:
        return ""
    return pair_incidence_svg(before.curves, after.curves, after.t_unit, salt=f"pair-{index}") or ""


# One process that renders again and again (`--serve`) draws each unchanged run once.
_RUN_CACHE: dict[tuple[Any, ...], tuple[Any, str | None]] = {}


def _run_signature(info: RunInfo) -> tuple[int, ...]:
    """Moves when the run's manifest is rewritten or a batch file lands."""
    marks = []
    for path in (info.path / "manifest.json", info.episodes_dir):
        try:
            marks.append(path.stat().st_mtime_ns)
        except OSError:
            marks.append(-1)
    return (*marks, len(info.batch_files()))


def dashboard_path(store: str | os.PathLike[str] | None = None) -> Path:
    return RunStore(store).root / DASHBOARD_FILE


def write_dashboard(
    store: str | os.PathLike[str] | None = None,
    *,
    compared_log: Path | None = None,
    plots: int = DEFAULT_PLOTS,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Write `<store>/dashboard.html` atomically (never half a page); return its path."""
    root = RunStore(store).root
    if not root.is_dir():
        raise ProveError(f"no store at {root}", suggestions=["poisson-prove sweep --yes"])
    html = render_dashboard(root, compared_log=compared_log, plots=plots, progress=progress)
    path = root / DASHBOARD_FILE
    clear_stale_temps(root, DASHBOARD_FILE)  # what a killed writer of the page left
    write_text_atomic(path, html, durable=False)  # the page is redrawn from the store at will
    return path


def refresh_existing(
    store: str | os.PathLike[str] | None = None, *, compared_log: Path | None = None
) -> Path | None:
    """Rewrite the store's dashboard if it has one; a store without one is left alone."""
    if not dashboard_path(store).is_file():
        return None
    return write_dashboard(store, compared_log=compared_log)
