"""The dashboard's "where" section: which agent moved each row, and one flipped pair side by side.

For the first `TWINS_SHOWN` comparisons on the page, `diff`'s attribution
(poisson_prove.comparison.twins.attribute): per moved row what `diff`'s "where" block says (the
agent named, or why none is; per agent how often it is the first divergence among the flipped
pairs read and among the unflipped ones, and what of it changed; the pairs read of all; its
agent checks that moved), and one flipped pair's two trees of agent calls side by side, agent
by agent, the first divergence marked (the pair `inspect --pair` shows). A comparison of runs without agent
spans, or where nothing moved, has no section. Every value is text: the section's template
(dashboard/twins.html.j2) autoescapes it, agent names, outputs and check names included.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from poisson_prove.comparison.attribution import CheckComparison, RowAttribution
from poisson_prove.comparison.result import Comparison
from poisson_prove.comparison.twins import PairLine, PairView, attribute_with_pairs
from poisson_prove.errors import ProveError

TWINS_SHOWN = 3  # comparisons, first on the page, attributed (each reads its runs' agent spans)
TEMPLATE = Path(__file__).with_name("twins.html.j2")


@dataclass(frozen=True)
class TwinRow:
    """One moved row: its attribution, its agent checks that moved and, when a pair of its twins
    flipped, that pair."""

    row: RowAttribution
    checks: tuple[CheckComparison, ...]  # q at most the comparison's q
    view: PairView | None


@dataclass(frozen=True)
class TwinSection:
    reason: str | None  # why no agent is named for the whole comparison (unpaired runs, ...)
    rows: tuple[TwinRow, ...]
    before: str  # the runs' names
    after: str


def section_of(comparison: Comparison, *, store: str | None) -> TwinSection | None:
    """The section of one comparison, or None when the attribution says nothing."""
    attribution, views = attribute_with_pairs(comparison, store=store)
    if not attribution.said:
        return None
    before, after = comparison.before.name, comparison.after.name
    if not attribution.available:
        return TwinSection(attribution.reason, (), before, after)
    rows = []
    for row, view in zip(attribution.rows, views, strict=True):
        moved = tuple(c for c in row.checks if c.q_value is not None and c.q_value <= comparison.q)
        rows.append(TwinRow(row, moved, view))
    return TwinSection(None, tuple(rows), before, after)


def short(call: Any) -> str:
    """A call's output hash, shortened as `inspect --pair` prints it."""
    return (call.output_hash or "").removeprefix("sha256:")[:10] or "-"


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    from jinja2 import Environment  # jinja2: ~30 ms, only when the dashboard page is written

    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(short=short, count=lambda n: f"{n:,}", p=_p)
    return env.from_string(TEMPLATE.read_text(encoding="utf-8"))


def section_html(section: TwinSection | None) -> Markup:
    """The section as HTML, every value escaped ('' for none)."""
    if section is None:
        return Markup("")
    return Markup(_template().render(section=section, depth=_depth))  # autoescaped: values are text


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _depth(line: PairLine) -> str:
    return f"{1.2 * line.depth:.1f}em"


def comparison_section(comparison: Comparison, store: str | None) -> tuple[Markup, bool]:
    """The section of one comparison as HTML ('' where there is nothing to say), and whether it
    was read (False: the runs' spans could not be read, and the section says so instead)."""
    try:
        return section_html(section_of(comparison, store=store)), True
    except (ProveError, OSError, ValueError) as err:  # a damaged batch: say so, show the rest
        reason = str(getattr(err, "message", err))
        failed = TwinSection(f"the runs' agent spans could not be read: {reason}", (),
                             comparison.before.name, comparison.after.name)
        return section_html(failed), False


def twin_sections(comparisons: Sequence[Any], store: str | None) -> list[Markup]:
    """One section per comparison view (`dashboard.comparisons.ComparisonView`), '' beyond the
    first TWINS_SHOWN and where there is nothing to say."""
    out = []
    for n, view in enumerate(comparisons):
        comparison = getattr(view, "comparison", None)
        if comparison is None or n >= TWINS_SHOWN:
            out.append(Markup(""))
            continue
        out.append(comparison_section(comparison, store)[0])
    return out
