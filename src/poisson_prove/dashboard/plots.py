"""The dashboard's plots: SVG written directly as text, to inline in the page.

Each plot is a handful of SVG elements (step curves and bands as `<path>`, markers, axes,
ticks, grid, text), written here in a few milliseconds without a plotting library: a refresh
that draws one new run's panels pays no import and no layout engine (BENCHMARKS.md, A refresh
after one new run). Nothing in the output is a script or a reference to anything outside the
page; every text (condition labels, outcome names, units) is XML-escaped here, so the page's
Content-Security-Policy holds. The output depends only on the values drawn: the same store
gives the same bytes.

The pictures are those the page drew with matplotlib before: panels of 3 columns with the
same sizes and margins, shared axes (tick labels on the outer panels only), the y-axis scaled
to the curves (y_top), bands at 15% opacity, the before curves dashed, the forest plot's rows
coloured by verdict with the trade's diamond beside them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape

from poisson_prove.comparison.result import Comparison
from poisson_prove.dashboard.collect import ConditionCurves

WORSE, SAFER, TRADE, NEUTRAL, BEFORE = "#c62828", "#2e7d32", "#f9a825", "#607d8b", "#9e9e9e"
OUTCOME_COLORS = ("#c62828", "#6a1b9a", "#ef6c00", "#1565c0", "#00838f", "#5d4037")
INCH = 72.0  # points: the unit of every size below, as a printed figure's
FONT = 8.0  # points
CHAR = 0.56 * FONT  # a sans-serif character's mean width, for laying out labels
INK, GRID, AXIS = "#212121", "#b0b0b0", "#333333"


def _short(text: str, limit: int = 44) -> str:
    """A label cut to fit beside a plot (the tables beside it carry the full text)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _n(value: float) -> str:
    """A coordinate to a tenth of a point (far below a screen pixel), without a trailing .0."""
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def _text(x: float, y: float, text: str, *, anchor: str = "start", size: float = FONT,
          rotate: bool = False, weight: str = "") -> str:
    turn = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
    bold = f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" font-size="{_n(size)}"{bold}{turn}>'
            f"{escape(text)}</text>")


def _svg(width: float, height: float, body: Iterable[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}pt" height="{_n(height)}pt" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" '
        f'fill="{INK}">' + "".join(body) + "</svg>"
    )


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round values from `low` to `high` (steps of 1, 2, 2.5 or 5 times a power
    of ten), both ends included when they are round."""
    span = high - low
    if not (math.isfinite(span) and span > 0):
        return [low]
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * 0.999)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    k = first
    while k * step <= high + step * 1e-9:
        ticks.append(round(k * step, 12))
        k += 1
    return ticks


def _tick_text(value: float, ticks: Sequence[float]) -> str:
    """A tick's label with as many decimals as its axis' step needs."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    return f"{value:.{decimals}f}"


class _Axes:
    """A panel: data (x in [x0, x1], y in [y0, y1]) mapped into a box of the figure."""

    def __init__(self, left: float, top: float, width: float, height: float,
                 x: tuple[float, float], y: tuple[float, float]) -> None:
        self.left, self.top, self.width, self.height = left, top, width, height
        self.x0, self.x1 = x
        self.y0, self.y1 = y

    def px(self, x: float) -> float:
        return self.left + (x - self.x0) / ((self.x1 - self.x0) or 1.0) * self.width

    def py(self, y: float) -> float:
        return self.top + self.height - (y - self.y0) / ((self.y1 - self.y0) or 1.0) * self.height

    def frame(self, xticks: Sequence[float], yticks: Sequence[float], *, xlabels: bool, ylabels: bool,
              grid_x: bool = True, grid_y: bool = True, ytext: Sequence[str] | None = None) -> list[str]:
        """The grid, the left and bottom spines, their ticks and (where asked) tick labels."""
        out = []
        bottom, right = self.top + self.height, self.left + self.width
        lines = []
        if grid_x:
            lines += [f"M{_n(self.px(v))} {_n(self.top)}V{_n(bottom)}" for v in xticks]
        if grid_y:
            lines += [f"M{_n(self.left)} {_n(self.py(v))}H{_n(right)}" for v in yticks]
        if lines:
            out.append(f'<path d="{"".join(lines)}" stroke="{GRID}" stroke-opacity="0.3" '
                       'stroke-width="0.5" fill="none"/>')
        marks = [f"M{_n(self.px(v))} {_n(bottom)}v3.5" for v in xticks]
        marks += [f"M{_n(self.left)} {_n(self.py(v))}h-3.5" for v in yticks]
        spines = f"M{_n(self.left)} {_n(self.top)}V{_n(bottom)}H{_n(right)}"
        out.append(f'<path d="{spines}{"".join(marks)}" stroke="{AXIS}" stroke-width="0.8" fill="none"/>')
        if xlabels:
            out += [_text(self.px(v), bottom + 3.5 + FONT + 1, _tick_text(v, xticks), anchor="middle")
                    for v in xticks]
        if ylabels:
            texts = ytext if ytext is not None else [_tick_text(v, yticks) for v in yticks]
            out += [_text(self.left - 5.5, self.py(v) + FONT * 0.35, t, anchor="end")
                    for v, t in zip(yticks, texts, strict=True)]
        return out


def _runs(values: Sequence[float]) -> list[tuple[int, int]]:
    """The stretches [start, end) of finite values (a curve is not drawn through a missing one)."""
    out, start = [], None
    for i, v in enumerate(values):
        if math.isfinite(v):
            start = i if start is None else start
        elif start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(values)))
    return out


def _step(ax: _Axes, times: Sequence[float], values: Sequence[float]) -> str:
    """A step curve (each value holds until the next time) as path data."""
    parts = []
    for start, end in _runs(values):
        parts.append(f"M{_n(ax.px(times[start]))} {_n(ax.py(values[start]))}")
        parts += [f"H{_n(ax.px(times[i]))}V{_n(ax.py(values[i]))}" for i in range(start + 1, end)]
    return "".join(parts)


def _band(ax: _Axes, times: Sequence[float], lo: Sequence[float], hi: Sequence[float]) -> str:
    """The area between two step curves as path data."""
    both = [lo[i] if math.isfinite(hi[i]) else math.nan for i in range(len(lo))]
    parts = []
    for start, end in _runs(both):
        top = [f"M{_n(ax.px(times[start]))} {_n(ax.py(hi[start]))}"]
        top += [f"H{_n(ax.px(times[i]))}V{_n(ax.py(hi[i]))}" for i in range(start + 1, end)]
        top.append(f"V{_n(ax.py(lo[end - 1]))}")
        top += [f"V{_n(ax.py(lo[i - 1]))}H{_n(ax.px(times[i - 1]))}" for i in range(end - 1, start, -1)]
        parts.append("".join(top) + "Z")
    return "".join(parts)


def y_top(panels: Iterable[ConditionCurves]) -> float:
    """The y-axis' top: a little above the highest band end drawn (at least 0.02, at most 1),
    so a rise from 0.01 to 0.04 fills the panel instead of being a line along its floor."""
    values = (v for panel in panels for curve in panel.curves for v in (*curve.hi, *curve.share))
    highest = max((v for v in values if math.isfinite(v)), default=0.0)
    return min(1.0, max(0.02, highest * 1.1))


def _legend(entries: Sequence[tuple[str, str, bool]], width: float, columns: int) -> tuple[list[str], float]:
    """A legend of (label, colour, dashed) above the panels, right-aligned, in rows of at most
    `columns` entries (fewer when a row would not fit the figure's width); and the height it
    needs beyond the figure's top margin (which holds one row)."""
    room = width - 2 * 0.1 * INCH
    widths = [22 + len(label) * CHAR + 10 for label, _, _ in entries]
    fits = next((c for c in range(max(columns, 1), 0, -1)
                 if all(sum(widths[i : i + c]) <= room for i in range(0, len(widths), c))), 1)
    rows = math.ceil(len(entries) / fits)
    first = 0.45 * INCH / 2 if rows == 1 else FONT + 2  # the top margin holds one row
    out = []
    for r, start in enumerate(range(0, len(entries), fits)):
        x = width - 0.1 * INCH - sum(widths[start : start + fits])
        y = first + r * (FONT + 4)
        for (label, color, dashed), step in zip(entries[start : start + fits], widths[start : start + fits],
                                                strict=True):
            dash = ' stroke-dasharray="4 1.8" stroke-opacity="0.8"' if dashed else ""
            out.append(f'<path d="M{_n(x)} {_n(y - FONT * 0.35)}h16" stroke="{color}" stroke-width="1.5"'
                       f' fill="none"{dash}/>')
            out.append(_text(x + 20, y, label))
            x += step
    last = first + (rows - 1) * (FONT + 4)
    return out, max(0.0, last + FONT + 6 - (0.45 * INCH - 4))  # clear of the panels' titles


def _with_legend(width: float, height: float, body: list[str], entries: Sequence[tuple[str, str, bool]],
                 columns: int) -> str:
    """The panels' SVG with their legend on top (the panels moved down when it needs more room)."""
    legend, extra = _legend(entries, width, columns)
    if extra:
        body = [f'<g transform="translate(0 {_n(extra)})">', *body, "</g>"]
    return _svg(width, height + extra, [*body, *legend])


class _Panels:
    """A grid of at most 3 columns of panels with shared axes, in fixed margins (as the page's
    plots always were: measuring every label of every panel was most of the drawing's time)."""

    def __init__(self, count: int, x_high: float, y_high: float) -> None:
        self.count = count
        self.columns = min(3, max(1, count))
        self.rows = math.ceil(count / self.columns)
        self.width = (3.0 * self.columns + 0.6) * INCH
        self.height = (2.1 * self.rows + 0.5) * INCH
        left, right, bottom, top = 0.6 * INCH, 0.1 * INCH, 0.45 * INCH, 0.45 * INCH
        wide = (self.width - left - right) / (self.columns + 0.12 * (self.columns - 1))
        tall = (self.height - top - bottom) / (self.rows + 0.45 * (self.rows - 1))
        self.xticks = nice_ticks(0.0, x_high)
        self.yticks = nice_ticks(0.0, y_high)
        self.axes = [
            _Axes(left + (i % self.columns) * wide * 1.12, top + (i // self.columns) * tall * 1.45,
                  wide, tall, (0.0, x_high), (0.0, y_high))
            for i in range(count)
        ]

    def frame(self, index: int, title: str, t_unit: str) -> list[str]:
        ax = self.axes[index]
        lowest = index + self.columns >= self.count  # no panel below it: its x-axis is labelled
        first = index % self.columns == 0
        out = ax.frame(self.xticks, self.yticks, xlabels=lowest, ylabels=first)
        out.append(_text(ax.left, ax.top - 4, _short(title)))
        if lowest:
            out.append(_text(ax.left + ax.width / 2, ax.top + ax.height + 3.5 + 2 * FONT + 5, t_unit,
                             anchor="middle"))
        if first:
            out.append(_text(ax.left - 31, ax.top + ax.height / 2, "cumulative incidence", anchor="middle",
                             rotate=True))
        return out


def _x_high(panels: Iterable[ConditionCurves]) -> float:
    times = [t for panel in panels for curve in panel.curves for t in curve.times if math.isfinite(t)]
    return max(times, default=1.0) or 1.0


def incidence_svg(panels: Sequence[ConditionCurves], t_unit: str) -> str:
    """One panel per condition: each failure outcome's cumulative incidence over t, banded,
    the y-axis scaled to the curves (y_top)."""
    grid = _Panels(len(panels), _x_high(panels), y_top(panels))
    body: list[str] = []
    for index, panel in enumerate(panels):
        ax = grid.axes[index]
        body += grid.frame(index, panel.label, t_unit)
        for i, curve in enumerate(panel.curves):
            color = OUTCOME_COLORS[i % len(OUTCOME_COLORS)]
            body.append(f'<path d="{_band(ax, curve.times, curve.lo, curve.hi)}" fill="{color}" '
                        'fill-opacity="0.15" stroke="none"/>')
            body.append(f'<path d="{_step(ax, curve.times, curve.share)}" stroke="{color}" '
                        'stroke-width="1.4" fill="none"/>')
    entries = [(_short(c.outcome, 30), OUTCOME_COLORS[i % len(OUTCOME_COLORS)], False)
               for i, c in enumerate(panels[0].curves)] if panels else []
    return _with_legend(grid.width, grid.height, body, entries, len(entries))


def pair_incidence_svg(
    before: Sequence[ConditionCurves], after: Sequence[ConditionCurves], t_unit: str
) -> str | None:
    """One panel per condition both runs have: each failure outcome's cumulative incidence
    before (dashed, no band) and after (solid, with its 95% band) on the same axes, the y-axis
    scaled to the curves. None when the runs share no condition."""
    earlier = {panel.label: panel for panel in before}
    pairs = [(earlier[panel.label], panel) for panel in after if panel.label in earlier]
    if not pairs:
        return None
    drawn = [panel for pair in pairs for panel in pair]
    grid = _Panels(len(pairs), _x_high(drawn), y_top(drawn))
    body: list[str] = []
    entries: list[tuple[str, str, bool]] = []
    for index, (old, new) in enumerate(pairs):
        ax = grid.axes[index]
        body += grid.frame(index, new.label, t_unit)
        colors = {c.outcome: OUTCOME_COLORS[i % len(OUTCOME_COLORS)] for i, c in enumerate(new.curves)}
        for curve in old.curves:
            color = colors.get(curve.outcome, BEFORE)
            body.append(f'<path d="{_step(ax, curve.times, curve.share)}" stroke="{color}" '
                        'stroke-width="1.1" stroke-dasharray="4 1.8" stroke-opacity="0.8" fill="none"/>')
            if index == 0:
                entries.append((f"{_short(curve.outcome, 24)} before", color, True))
        for curve in new.curves:
            color = colors[curve.outcome]
            body.append(f'<path d="{_band(ax, curve.times, curve.lo, curve.hi)}" fill="{color}" '
                        'fill-opacity="0.15" stroke="none"/>')
            body.append(f'<path d="{_step(ax, curve.times, curve.share)}" stroke="{color}" '
                        'stroke-width="1.5" fill="none"/>')
            if index == 0:
                entries.append((f"{_short(curve.outcome, 24)} after", color, False))
    return _with_legend(grid.width, grid.height, body, entries, 4)


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


def forest_svg(comparison: Comparison) -> str:
    """Per condition and event: before (grey) and after (the verdict's colour), each with its
    95% interval as the comparison reports it; a trade condition is marked. For runs with a
    case axis the conditions are the pooled groups: one line per pooled row."""
    rows = [(c, o) for c in comparison.conditions for o in c.outcomes if o.verdict != "not tested"]
    labels = [_short(f"{c.label} · {o.outcome}", 60) for c, o in rows]
    pooled = f"pooled over the {comparison.case_axis} cases, " if comparison.case_axis else ""
    xlabel = (f"{pooled}rate by {comparison.horizon:g} {comparison.t_unit} (grey: before; "
              "red worse, green safer; yellow diamond: trade)")
    width = 7.5 * INCH
    left = 8 + max((len(label) for label in labels), default=0) * CHAR + 6
    right = 14.0  # room for the trade's diamond beyond x = 1
    plot = max(width - left - right, 2.5 * INCH)
    width = max(width, left + plot + right, len(xlabel) * CHAR + 8)
    count = max(len(rows), 1)
    height = (0.9 + 0.26 * count) * INCH
    ax = _Axes(left, 8.0, plot, height - 8.0 - (3.5 + 2 * FONT + 14), (0.0, 1.0), (count - 0.5, -0.5))
    body = ax.frame(nice_ticks(0.0, 1.0), list(range(len(rows))), xlabels=True, ylabels=True,
                    grid_y=False, ytext=labels)
    for y, (condition, result) in enumerate(rows):
        color = _row_color(result.verdict, result.outcome not in comparison.successes)
        for rate, shade, dy in ((result.before, BEFORE, -0.12), (result.after, color, 0.12)):
            if rate.share is None:
                continue
            low, high = error_bar(rate.share, rate.lo, rate.hi)
            cy = ax.py(y + dy)
            x0, x1 = ax.px(rate.share - low), ax.px(rate.share + high)
            bar = f"M{_n(x0)} {_n(cy)}H{_n(x1)}M{_n(x0)} {_n(cy - 2)}v4M{_n(x1)} {_n(cy - 2)}v4"
            body.append(f'<path d="{bar}" stroke="{shade}" stroke-width="1.2" fill="none"/>')
            body.append(f'<circle cx="{_n(ax.px(rate.share))}" cy="{_n(cy)}" r="1.8" fill="{shade}"/>')
        if condition.verdict == "trade":
            cx, cy = ax.px(1.02), ax.py(y)
            body.append(f'<path d="M{_n(cx)} {_n(cy - 2.8)}l2.8 2.8l-2.8 2.8l-2.8 -2.8Z" fill="{TRADE}"/>')
    center = min(max(ax.left + ax.width / 2, len(xlabel) * CHAR / 2 + 4), width - len(xlabel) * CHAR / 2 - 4)
    body.append(_text(center, ax.top + ax.height + 3.5 + 2 * FONT + 6, xlabel, anchor="middle"))
    return _svg(width, height, body)
