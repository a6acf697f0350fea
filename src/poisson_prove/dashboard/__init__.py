"""The store dashboard: one self-contained HTML page of runs and comparisons.

`write_dashboard(store)` writes `<store>/dashboard.html` (atomically); `refresh_existing`
rewrites it only when the store already has one (what sweep, diff and check call).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from poisson_prove.comparison import compare
from poisson_prove.comparison.result import Comparison
from poisson_prove.dashboard.cache import CacheMiss, DrawingCache, decode, encode
from poisson_prove.dashboard.collect import RunView, partner_episodes, run_view, unreadable_view
from poisson_prove.dashboard.comparisons import ComparisonView, comparison_views
from poisson_prove.dashboard.page import render_page, run_section
from poisson_prove.dashboard.plots import forest_svg, incidence_svg, pair_incidence_svg
from poisson_prove.dashboard.twins import TWINS_SHOWN, comparison_section
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
    cache: bool = True,
) -> str:
    """The page as text. `compared_log`: the comparisons log to show past comparisons from;
    `progress(done, total)` is called after each run is read (and drawn); `pair` (before,
    after run ids): a comparison to show first (what `--serve` is asked for with
    `?before=...&after=...`); `served`: the page's pair picker may ask the server for a pair;
    `cache`: reuse (and keep) what unchanged runs and comparisons drew before, in the store's
    `.dashboard-cache/` (dashboard/cache.py); False draws everything and keeps nothing."""
    runs_store = RunStore(store)
    infos = runs_store.runs()
    drawn = DrawingCache(runs_store.root, enabled=cache)
    signatures = {info.run_id: run_signature(info) for info in infos}
    first_plotted = max(len(infos) - plots, 0)
    partners = _partners(infos)
    views, incidence, used, sections = [], {}, set(), []
    for i, info in enumerate(infos):
        plot = i >= first_plotted
        partner = partners.get(info.run_id)
        partner_mark = signatures[partner.run_id] if partner is not None and plot else None
        key = (str(info.path), plot, _run_signature(info), *(_run_signature(partner) if partner else ()))
        used.add(key)
        if key not in _RUN_CACHE:
            _RUN_CACHE[key] = _drawn_run(drawn, info, plot, partner, signatures[info.run_id], partner_mark)
        entry = _RUN_CACHE[key]
        # the run's section of the page, kept with its entry: drawn again only for a run whose
        # view, place (the newest is open) or --plots changed
        section_key = {"first": i == len(infos) - 1, "plotted": plots, "plot": plot}
        stored = entry.payload.get("section")
        if not (isinstance(stored, dict) and isinstance(stored.get("html"), str)
                and all(stored.get(k) == v for k, v in section_key.items())):
            html = run_section(entry.view, first=i == len(infos) - 1, svg=entry.svg, plotted=plots)
            entry.payload["section"] = stored = {**section_key, "html": html}
            entry.fresh = True
        if entry.fresh and entry.key is not None:
            drawn.put(f"run-{info.run_id}", entry.key, entry.payload)
            entry.fresh = False
        sections.append(stored["html"])
        if progress is not None:
            progress(i + 1, len(infos))
        views.append(entry.view)
        if entry.svg:
            incidence[entry.view.run_id] = entry.svg
    for stale in set(_RUN_CACHE) - used:
        del _RUN_CACHE[stale]  # a run that changed, left the plotted few, or went away
    neighbours = min(plots, NEIGHBOURS)
    comparer = _Comparer(drawn, signatures, runs_store.root)
    comparisons = comparison_views(
        runs_store.root, compared_log, neighbours=neighbours, requested=pair, compare_runs=comparer,
        infos=infos,
    )
    by_id = {view.run_id: view for view in views}
    forests, pair_curves, where = [], [], []
    for i, view in enumerate(comparisons):
        forest, curves = comparer.drawings(view, by_id, with_pair=i < PAIR_CURVES)
        forests.append(forest)
        pair_curves.append(curves)
        where.append(comparer.where(view) if i < TWINS_SHOWN else "")
    comparer.keep()
    drawn.prune({f"run-{run_id}" for run_id in signatures}, comparer.used)
    written = utc_now_iso()
    return render_page(
        store=str(runs_store.root), written=written, runs=views, comparisons=comparisons,
        forests=forests, incidence=incidence, plotted=plots, refresh=refresh, pair_curves=pair_curves,
        served=served, twins=where, sections=sections[::-1],
    )


@dataclass
class _RunEntry:
    """A run's view and incidence SVG, and the cache entry they are (or will be) kept as:
    `key` None for a view that is not kept (an unreadable run); `fresh`: to be written."""

    view: RunView
    svg: str | None
    key: dict[str, Any] | None
    payload: dict[str, Any]
    fresh: bool


def _drawn_run(
    drawn: DrawingCache, info: RunInfo, plot: bool, partner: RunInfo | None,
    mark: dict[str, Any], partner_mark: dict[str, Any] | None,
) -> _RunEntry:
    """The run's view and incidence SVG: from the store's cache when it holds them for this very
    run (and, when plotted, this partner), else read and drawn (kept by the caller, with the
    run's section). A plotted entry serves an unplotted view too; a plotted entry of another
    partner keeps its curves and draws only the episode table again."""
    name = f"run-{info.run_id}"
    try:
        stored, payload = drawn.get(name, {"run": mark})
        view = decode(RunView, payload["view"])
        svg = payload["svg"]
        if not isinstance(svg, (str, type(None))) or view.run_id != info.run_id:
            raise CacheMiss("not this run's")
        if stored.get("plot") and not plot:
            unplotted = replace(view, curves=None, failed=(), episodes=None)
            return _RunEntry(unplotted, None, stored, payload, False)  # its plotted entry stays
        if bool(stored.get("plot")) != plot:
            raise CacheMiss("drawn without its plots")
        if not plot or stored.get("partner") == partner_mark:
            return _RunEntry(view, svg, stored, payload, False)
        view = replace(view, episodes=partner_episodes(info, partner, view))
    except CacheMiss:
        try:
            view = run_view(info, plot=plot, partner=partner)
        except ProveError as err:  # a damaged batch: say so on the page, show the rest
            unreadable = unreadable_view(info, err.message)
            return _RunEntry(unreadable, None, None, {}, False)  # not kept: drawn again next time
        svg = incidence_svg(view.curves, view.t_unit) if view.curves else None
    key = {"run": mark, "plot": plot, "partner": partner_mark}
    return _RunEntry(view, svg, key, {"view": encode(view), "svg": svg}, True)


class _Comparer:
    """`compare()` through the store's cache: a comparison of two unchanged runs (same method,
    event and q) is decoded, not computed; its forest plot and before/after panels too."""

    def __init__(self, drawn: DrawingCache, signatures: dict[str, dict[str, Any]], root: Path) -> None:
        self.drawn, self.signatures, self.root = drawn, signatures, root
        self.used: set[str] = set()
        self._entries: dict[int, tuple[str, dict[str, Any], dict[str, Any], bool]] = {}

    def _key(
        self, before: str, after: str, method: str | None, event: str | None, q: float
    ) -> dict[str, Any]:
        return {
            "before": self.signatures.get(before), "after": self.signatures.get(after),
            "method": method, "event": event, "q": q,
        }

    def __call__(
        self, before: str, after: str, *, method: str | None = None, event: str | None = None, q: float = 0.05
    ) -> Comparison:
        key = self._key(before, after, method, event, q)
        name = "cmp-" + hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
        try:
            _, payload = self.drawn.get(name, key)
            result = decode(Comparison, payload["comparison"])
            if (result.before.run_id, result.after.run_id) != (before, after):
                raise CacheMiss("another pair's")
            fresh = False
        except (CacheMiss, KeyError):
            result = compare(before, after, method=method, event=event, q=q, store=self.root)
            payload, fresh = {"comparison": encode(result)}, True
        self.used.add(name)
        self._entries[id(result)] = (name, key, payload, fresh)
        return result

    def drawings(self, view: ComparisonView, runs: dict[str, RunView], *, with_pair: bool) -> tuple[str, str]:
        """The comparison's forest plot and (`with_pair`) its before/after panels."""
        if view.comparison is None:
            return "", ""
        name, key, payload, fresh = self._entries[id(view.comparison)]
        forest = payload.get("forest")
        if not isinstance(forest, str):
            forest = payload["forest"] = forest_svg(view.comparison)
            fresh = True
        curves = ""
        if with_pair and _both_drawn(view.comparison, runs):
            stored = payload.get("pair")
            if isinstance(stored, str):
                curves = stored
            else:
                curves = payload["pair"] = _pair_curves(view, runs)
                fresh = True
        self._entries[id(view.comparison)] = (name, key, payload, fresh)
        return forest, curves

    def where(self, view: ComparisonView) -> str:
        """The comparison's "where" section (dashboard/twins.py): which agent moved each row. It
        reads the runs' agent spans, so it is kept with the comparison, under the same key."""
        if view.comparison is None:
            return ""
        name, key, payload, _ = self._entries[id(view.comparison)]
        html = payload.get("where")
        if isinstance(html, str):
            return html
        section, read = comparison_section(view.comparison, str(self.root))
        if read:  # a section saying the spans could not be read is not kept: read again next time
            payload["where"] = str(section)
            self._entries[id(view.comparison)] = (name, key, payload, True)
        return str(section)

    def keep(self) -> None:
        """Write the entries computed or drawn anew."""
        for name, key, payload, fresh in self._entries.values():
            if fresh:
                self.drawn.put(name, key, payload)


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


def _both_drawn(comparison: Comparison, runs: dict[str, RunView]) -> bool:
    before, after = runs.get(comparison.before.run_id), runs.get(comparison.after.run_id)
    return bool(before is not None and after is not None and before.curves and after.curves)


def _pair_curves(view: ComparisonView, runs: dict[str, RunView]) -> str:
    """The comparison's before and after incidence on one panel per condition, when both runs
    were drawn (the plotted runs); else ""."""
    if view.comparison is None or not _both_drawn(view.comparison, runs):
        return ""
    before, after = runs[view.comparison.before.run_id], runs[view.comparison.after.run_id]
    assert before.curves is not None and after.curves is not None  # _both_drawn
    return pair_incidence_svg(before.curves, after.curves, after.t_unit) or ""


# One process that renders again and again (`--serve`) draws each unchanged run once.
_RUN_CACHE: dict[tuple[Any, ...], _RunEntry] = {}


def _run_signature(info: RunInfo) -> tuple[int, ...]:
    """Moves when the run's manifest is rewritten or a batch file lands."""
    marks = []
    for path in (info.path / "manifest.json", info.episodes_dir):
        try:
            marks.append(path.stat().st_mtime_ns)
        except OSError:
            marks.append(-1)
    return (*marks, len(info.batch_files()))


def run_signature(info: RunInfo) -> dict[str, Any]:
    """What a cache entry of the run is drawn from: its id, its manifest's content (status and
    counts included) and each batch file's name, size and mtime."""
    manifest = hashlib.sha256(json.dumps(info.manifest, sort_keys=True, default=str).encode()).hexdigest()
    batches = []
    for path in info.batch_files():
        try:
            mark = path.stat()
            batches.append([path.name, mark.st_size, mark.st_mtime_ns])
        except OSError:
            batches.append([path.name, -1, -1])
    return {"id": info.run_id, "manifest": manifest, "batches": batches}


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
