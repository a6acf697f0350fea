"""The dashboard as one self-contained HTML page: one fixed script, no request, everything escaped.

Jinja2 autoescapes every value; the only markup not escaped is the SVG dashboard/plots.py
wrote (every text in it XML-escaped there). Exact numbers ride in `data-*` attributes beside
the rounded text, so a reader (or a test) can check them against `diff --json`.

The one script is dashboard.js, inlined as it is (no value of the store goes into it) and
allowed by its SHA-256 in the Content-Security-Policy: no other script can run, nothing can
be fetched (`default-src 'none'`, `connect-src` unset). It sorts and filters the tables the
page already holds, opens an episode's spans and finds a pair of runs' comparison; it reads
the page's text and `data-*` attributes and writes only text (`textContent`), never markup.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from poisson_prove.comparison.result import METHOD_NAMES
from poisson_prove.dashboard.collect import RunView
from poisson_prove.dashboard.comparisons import CASES_SHOWN, ComparisonView
from poisson_prove.dashboard.twins import twin_sections

SCRIPT = Path(__file__).with_name("dashboard.js").read_text(encoding="utf-8")
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = (
    f"default-src 'none'; script-src '{SCRIPT_HASH}'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


def exact(value: Any) -> str:
    """A number as JSON writes it (the text `diff --json` prints), `null` when missing."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "null"
    return json.dumps(value)


def share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def pvalue(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1e}" if value < 0.001 else f"{value:.3f}"


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def mde_text(rise: float | None, fall: float | None) -> str:
    up = f"+{math.ceil(rise * 1000) / 1000:.3f}" if rise is not None else "no rise"
    down = f"-{math.ceil(fall * 1000) / 1000:.3f}" if fall is not None else "no fall"
    return f"could have shown {up} / {down}"


TEMPLATE = Path(__file__).with_name("dashboard.html.j2")
RUN_TEMPLATE = TEMPLATE.with_name("run.html.j2")  # one run's section, kept with the run's cache entry


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    """The page's template, compiled once per process and kept compiled by Jinja's bytecode
    cache (compiling it was a seventh of a refresh after one new run; `--serve` writes the
    page again and again)."""
    from jinja2 import Environment, FileSystemLoader  # jinja2: ~30 ms, only when the page is written

    env = Environment(
        autoescape=True, trim_blocks=True, lstrip_blocks=True, loader=FileSystemLoader(TEMPLATE.parent),
        bytecode_cache=_bytecode_cache(),
    )
    env.filters.update(exact=exact, share=share, pvalue=pvalue)
    return env.get_template(TEMPLATE.name)


def _bytecode_cache() -> Any:
    """Jinja's own FileSystemBytecodeCache in its default folder (a per-user folder under the
    temporary directory, created 0700 and refused when another user owns it or can write to
    it), keyed by the template's source and Jinja's and Python's versions; None when that
    folder cannot be set up. Never in the store: a store's files are data, never executed. A
    cache that cannot be read or written only costs the compile."""
    from jinja2.bccache import Bucket, FileSystemBytecodeCache  # jinja2: loaded with it, above

    class Kept(FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # a torn or foreign file: compiled again (and rewritten)
                bucket.reset()

        def dump_bytecode(self, bucket: Bucket) -> None:
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass  # a full or read-only temporary directory: compiled again next time

    try:
        return Kept()
    except (OSError, RuntimeError):  # Jinja refuses a folder it does not own alone
        return None


def render_page(
    *,
    store: str,
    written: str,
    runs: Sequence[RunView],
    comparisons: Sequence[ComparisonView],
    forests: Sequence[str],
    incidence: dict[str, str],
    plotted: int,
    refresh: int | None = None,
    pair_curves: Sequence[str] = (),
    served: bool = False,
    twins: Sequence[str] | None = None,
    sections: Sequence[str] | None = None,
) -> str:
    """The page; `twins`: each comparison's "where" section as HTML (dashboard/twins.py, every
    value escaped there), computed here when not given; `sections`: each run's section
    (run_section), newest first, computed here when not given."""
    if twins is None:
        twins = twin_sections(comparisons, store)  # the "where" sections: which agent moved each row
    if sections is None:
        sections = [
            run_section(run, first=i == 0, svg=incidence.get(run.run_id), plotted=plotted)
            for i, run in enumerate(reversed(runs))
        ]
    return _template().render(
        csp=CSP, store=store, written=written, runs=list(runs), comparisons=list(comparisons),
        forests=[Markup(svg) for svg in forests],  # plots.py's SVG: its text is XML-escaped
        pair_curves=[Markup(svg) for svg in pair_curves] or [Markup("")] * len(comparisons),
        plotted=plotted,
        refresh=refresh, mde_text=mde_text, plural=plural, method_names=METHOD_NAMES, cases_shown=CASES_SHOWN,
        script=Markup(SCRIPT), served=served,  # the fixed script, allowed by its hash in the CSP
        twins=[Markup(html) for html in twins],  # HTML of dashboard/twins.html.j2, every value escaped there
        sections=[Markup(html) for html in sections],  # HTML of run.html.j2, every value escaped there
    )


def run_section(run: RunView, *, first: bool, svg: str | None, plotted: int) -> str:
    """One run's section of the page (run.html.j2; `first`: the newest run's, open): the same
    for the same view, so the dashboard keeps it with the run's cache entry."""
    html = _template().environment.get_template(RUN_TEMPLATE.name).render(
        run=run, first=first, svg=Markup(svg) if svg else None, plotted=plotted, plural=plural,
    )  # the SVG of plots.py: its text is XML-escaped there
    return html + "\n"  # the line end Jinja takes off a template's last line
