"""The dashboard's plots: matplotlib figures written as SVG text to inline in the page.

matplotlib draws without a display and without a script in the output, so the page keeps a
Content-Security-Policy with no script at all. Text stays text (`svg.fonttype: none`, small
pages) and matplotlib escapes it as XML; mathtext is off so a `$` in a condition or an
outcome name is drawn as itself; the id salt is fixed so the same store gives the same page.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from poisson_prove.comparison.result import Comparison
from poisson_prove.dashboard.collect import ConditionCurves
from poisson_prove.errors import ProveError

WORSE, SAFER, TRADE, NEUTRAL, BEFORE = "#c62828", "#2e7d32", "#f9a825", "#607d8b", "#9e9e9e"
OUTCOME_COLORS = ("#c62828", "#6a1b9a", "#ef6c00", "#1565c0", "#00838f", "#5d4037")
INSTALL = "pip install 'poisson-prove[dashboard]'"


def _matplotlib() -> Any:
    try:
        import matplotlib  # matplotlib: ~0.4 s, only when the dashboard draws curves
        from matplotlib.figure import Figure  # matplotlib: ~0.4 s, only when the dashboard draws curves
    except ImportError as exc:
        raise ProveError(
            "the dashboard draws its plots with matplotlib, which is not installed",
            suggestions=[INSTALL],
        ) from exc
    return matplotlib, Figure


def require_matplotlib() -> None:
    """Raise the install hint before any work when matplotlib is missing; found, not imported:
    a refresh whose plots all come from the drawing cache never pays matplotlib's import."""
    import importlib.util  # the finder only: a lookup on sys.path, nothing imported

    if importlib.util.find_spec("matplotlib") is None:
        raise ProveError(
            "the dashboard draws its plots with matplotlib, which is not installed",
            suggestions=[INSTALL],
        )


def _rc(salt: str) -> dict[str, Any]:
    return {
        "svg.fonttype": "none",
        "svg.hashsalt": salt,
        "text.parse_math": False,
        "font.size": 8,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.titlesize": 8,
    }


def _short(text: str, limit: int = 44) -> str:
    """A label cut to fit beside a plot (the tables beside it carry the full text)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _svg(figure: Any, tight: bool = True) -> str:
    buffer = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # layout advice is for the page's author, not the user
        figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight" if tight else None)
    text = buffer.getvalue()
    return _compact(text[text.index("<svg") :])  # no XML prolog or DOCTYPE: inline in HTML


_PATH_DATA = re.compile(r' d="([^"]*)"')
_DECIMALS = re.compile(r"(\d+\.\d)\d+")


def _compact(svg: str) -> str:
    """Path coordinates to a tenth of a point and one line each: a third of the bytes, the
    same picture (a tenth of a point is far below a screen pixel)."""

    def shorten(match: re.Match[str]) -> str:
        return ' d="' + " ".join(_DECIMALS.sub(r"\1", match.group(1)).split()) + '"'

    return _PATH_DATA.sub(shorten, svg)


def y_top(panels: Iterable[ConditionCurves]) -> float:
    """The y-axis' top: a little above the highest band end drawn (at least 0.02, at most 1),
    so a rise from 0.01 to 0.04 fills the panel instead of being a line along its floor."""
    values = (v for panel in panels for curve in panel.curves for v in (*curve.hi, *curve.share))
    highest = max((v for v in values if math.isfinite(v)), default=0.0)
    return min(1.0, max(0.02, highest * 1.1))


def _panels_figure(Figure: Any, count: int) -> tuple[Any, Any]:
    columns = min(3, max(1, count))
    rows = math.ceil(count / columns)
    # Fixed margins, not a layout engine: measuring every tick label of every panel was
    # most of the dashboard's time (BENCHMARKS.md, Dashboard); titles are cut to fit.
    width, height = 3.0 * columns + 0.6, 2.1 * rows + 0.5
    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(
        left=0.6 / width, right=1 - 0.1 / width, bottom=0.45 / height, top=1 - 0.45 / height,
        wspace=0.12, hspace=0.45,
    )
    return figure, figure.subplots(rows, columns, squeeze=False, sharex=True, sharey=True)


def pair_incidence_svg(
    before: Sequence[ConditionCurves], after: Sequence[ConditionCurves], t_unit: str, salt: str
) -> str | None:
    """One panel per condition both runs have: each failure outcome's cumulative incidence
    before (dashed, no band) and after (solid, with its 95% band) on the same axes, the y-axis
    scaled to the curves. None when the runs share no condition."""
    matplotlib, Figure = _matplotlib()
    earlier = {panel.label: panel for panel in before}
    pairs = [(earlier[panel.label], panel) for panel in after if panel.label in earlier]
    if not pairs:
        return None
    with matplotlib.rc_context(_rc(salt)):
        figure, axes = _panels_figure(Figure, len(pairs))
        top = y_top([panel for pair in pairs for panel in pair])
        for index, ax in enumerate(axes.flat):
            if index >= len(pairs):
                ax.set_visible(False)
                continue
            old, new = pairs[index]
            colors = {c.outcome: OUTCOME_COLORS[i % len(OUTCOME_COLORS)] for i, c in enumerate(new.curves)}
            for curve in old.curves:
                color = colors.get(curve.outcome, BEFORE)
                ax.step(curve.times, curve.share, where="post", color=color, lw=1.1, ls="--", alpha=0.8,
                        label=f"{_short(curve.outcome, 24)} before")
            for curve in new.curves:
                color = colors[curve.outcome]
                ax.fill_between(curve.times, curve.lo, curve.hi, step="post", color=color, alpha=0.15, lw=0)
                ax.step(curve.times, curve.share, where="post", color=color, lw=1.5,
                        label=f"{_short(curve.outcome, 24)} after")
            ax.set_title(_short(new.label), loc="left")
            ax.set_ylim(0, top)
            ax.grid(alpha=0.3, lw=0.5)
        for ax in axes[-1]:
            ax.set_xlabel(t_unit)
        for ax in axes[:, 0]:
            ax.set_ylabel("cumulative incidence")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        if handles:
            figure.legend(handles, labels, loc="upper right", ncols=min(len(labels), 4), frameon=False)
        return _svg(figure, tight=False)


def incidence_svg(panels: Sequence[ConditionCurves], t_unit: str, salt: str) -> str:
    """One panel per condition: each failure outcome's cumulative incidence over t, banded,
    the y-axis scaled to the curves (y_top)."""
    matplotlib, Figure = _matplotlib()
    with matplotlib.rc_context(_rc(salt)):
        figure, axes = _panels_figure(Figure, len(panels))
        top = y_top(panels)
        for index, ax in enumerate(axes.flat):
            if index >= len(panels):
                ax.set_visible(False)
                continue
            panel = panels[index]
            for i, curve in enumerate(panel.curves):
                color = OUTCOME_COLORS[i % len(OUTCOME_COLORS)]
                ax.fill_between(curve.times, curve.lo, curve.hi, step="post", color=color, alpha=0.15, lw=0)
                name = _short(curve.outcome, 30)
                ax.step(curve.times, curve.share, where="post", color=color, lw=1.4, label=name)
            ax.set_title(_short(panel.label), loc="left")
            ax.set_ylim(0, top)
            ax.grid(alpha=0.3, lw=0.5)
        for ax in axes[-1]:
            ax.set_xlabel(t_unit)
        for ax in axes[:, 0]:
            ax.set_ylabel("cumulative incidence")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        if handles:
            figure.legend(handles, labels, loc="upper right", ncols=len(labels), frameon=False)
        return _svg(figure, tight=False)


def _row_color(verdict: str, adverse: bool) -> str:
    if verdict == "rose":
        return WORSE if adverse else SAFER
    if verdict == "fell":
        return SAFER if adverse else WORSE
    return NEUTRAL


def error_bar(share: float, lo: float | None, hi: float | None) -> tuple[float, float]:
    """The lengths left and right of `share` to its interval's ends, never negative: an end
    missing, or a rounding hair inside the share, draws no bar on that side."""
    low = share - lo if lo is not None and math.isfinite(lo) else 0.0
    high = hi - share if hi is not None and math.isfinite(hi) else 0.0
    return max(low, 0.0), max(high, 0.0)


def forest_svg(comparison: Comparison, salt: str) -> str:
    """Per condition and event: before (grey) and after (the verdict's colour), each with its
    95% interval as the comparison reports it; a trade condition is marked. For runs with a
    case axis the conditions are the pooled groups: one line per pooled row."""
    matplotlib, Figure = _matplotlib()
    rows = [(c, o) for c in comparison.conditions for o in c.outcomes if o.verdict != "not tested"]
    with matplotlib.rc_context(_rc(salt)):
        figure = Figure(figsize=(7.5, 0.9 + 0.26 * max(len(rows), 1)), layout="constrained")
        ax = figure.subplots()
        for y, (condition, result) in enumerate(rows):
            color = _row_color(result.verdict, result.outcome not in comparison.successes)
            for rate, shade, dy in ((result.before, BEFORE, -0.12), (result.after, color, 0.12)):
                if rate.share is None:
                    continue
                low, high = error_bar(rate.share, rate.lo, rate.hi)
                ax.errorbar(rate.share, y + dy, xerr=[[low], [high]], fmt="o", ms=3.5, color=shade,
                            ecolor=shade, elinewidth=1.2, capsize=2)
            if condition.verdict == "trade":
                ax.plot([1.02], [y], marker="D", ms=4, color=TRADE, clip_on=False)
        labels = [_short(f"{c.label} · {o.outcome}", 60) for c, o in rows]
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        pooled = f"pooled over the {comparison.case_axis} cases, " if comparison.case_axis else ""
        ax.set_xlabel(f"{pooled}rate by {comparison.horizon:g} {comparison.t_unit} (grey: before; "
                      "red worse, green safer; yellow diamond: trade)")
        ax.grid(axis="x", alpha=0.3, lw=0.5)
        return _svg(figure)
