"""The store dashboard: one self-contained HTML page of runs and comparisons.

`write_dashboard(store)` writes `<store>/dashboard.html` (atomically); `refresh_existing`
rewrites it only when the store already has one (what sweep, diff and check call).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from poisson_prove.store import RunStore

DASHBOARD_FILE = "dashboard.html"
DEFAULT_PLOTS = 10  # runs whose incidence curves and failed episodes are drawn, newest first


def render_dashboard(
    store: str | os.PathLike[str] | None = None,
    *,
    compared_log: Path | None = None,
    plots: int = DEFAULT_PLOTS,
    refresh: int | None = None,
) -> str:
    """The page as text. `compared_log`: the comparisons log to show past comparisons from."""
    from poisson_prove.dashboard.collect import run_view
    from poisson_prove.dashboard.comparisons import comparison_views
    from poisson_prove.dashboard.page import render_page
    from poisson_prove.dashboard.plots import forest_svg, incidence_svg, require_matplotlib

    require_matplotlib()
    runs_store = RunStore(store)
    infos = runs_store.runs()
    first_plotted = max(len(infos) - plots, 0)
    views = [run_view(info, plot=i >= first_plotted) for i, info in enumerate(infos)]
    incidence = {
        view.run_id: incidence_svg(view.curves, view.t_unit, salt=f"run-{view.run_id}")
        for view in views
        if view.curves
    }
    comparisons = comparison_views(runs_store.root, compared_log)
    forests = [
        forest_svg(view.comparison, salt=f"cmp-{i}") if view.comparison else ""
        for i, view in enumerate(comparisons)
    ]
    written = dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return render_page(
        store=str(runs_store.root), written=written, runs=views, comparisons=comparisons,
        forests=forests, incidence=incidence, plotted=plots, refresh=refresh,
    )


def dashboard_path(store: str | os.PathLike[str] | None = None) -> Path:
    return RunStore(store).root / DASHBOARD_FILE


def write_dashboard(
    store: str | os.PathLike[str] | None = None,
    *,
    compared_log: Path | None = None,
    plots: int = DEFAULT_PLOTS,
) -> Path:
    """Write `<store>/dashboard.html` atomically (never half a page); return its path."""
    from poisson_prove.errors import ProveError

    root = RunStore(store).root
    if not root.is_dir():
        raise ProveError(f"no store at {root}", suggestions=["poisson-prove sweep --yes"])
    html = render_dashboard(root, compared_log=compared_log, plots=plots)
    path = root / DASHBOARD_FILE
    temporary = path.with_name(f".{DASHBOARD_FILE}.{os.getpid()}.tmp")
    temporary.write_text(html, encoding="utf-8")
    os.replace(temporary, path)
    return path


def refresh_existing(
    store: str | os.PathLike[str] | None = None, *, compared_log: Path | None = None
) -> Path | None:
    """Rewrite the store's dashboard if it has one; a store without one is left alone."""
    if not dashboard_path(store).is_file():
        return None
    return write_dashboard(store, compared_log=compared_log)
