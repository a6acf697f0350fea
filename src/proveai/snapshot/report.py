"""report.html of a verify run: the verdict table and each changed agent's pinned vs fresh I/O.

Self-contained (inline CSS, no script, no CDN), UTF-8, opens in any browser offline.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from proveai.snapshot.verify import VerifyResult

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1b1b}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
th{background:#f3f3f3}.unchanged{color:#2e7d32}.drifted,.inconclusive,.new{color:#b26a00}
.regressed,.missing,.iteration_count_changed{color:#c62828;font-weight:600}code{font-size:12px}
"""

SYMBOLS = {
    "unchanged": "✓",
    "drifted": "~",
    "regressed": "✗",
    "missing": "✗",
    "iteration_count_changed": "✗",
    "inconclusive": "?",
    "new": "+",
}


def render_verify_html(result: VerifyResult) -> str:
    esc = html.escape
    rows = "\n".join(
        f"<tr><td>{esc(v.agent)}</td>"
        f"<td class='{esc(v.status)}'>{SYMBOLS.get(v.status, '')} {esc(v.status)}</td>"
        f"<td>{esc(v.change or '—')}</td><td>{esc(v.rationale)}</td></tr>"
        for v in result.verdicts
    )
    replicate = ""
    if result.replicate_verdicts:
        body = "\n".join(
            f"<tr><td>{esc(r.agent)}</td><td>{r.fresh_failing}/{r.n_fresh}</td>"
            f"<td>{r.pinned_failing}/{r.n_pinned}</td>"
            f"<td>{r.p_value:.3g}</td><td>{r.p_adjusted:.3g}</td>"
            f"<td>{'fails' if r.fails else 'passes'}</td></tr>"
            for r in result.replicate_verdicts
        )
        replicate = (
            "<h2>Replicate test</h2><table><tr><th>Agent</th><th>fresh failing</th><th>pinned failing</th>"
            f"<th>p (Fisher, one-sided)</th><th>p (BH)</th><th>gate</th></tr>{body}</table>"
        )
    notes = "".join(f"<li>{esc(n)}</li>" for n in result.notes)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>proveai verify {esc(result.snapshot.name)}</title><style>{_CSS}</style></head><body>"
        f"<h1>Snapshot '{esc(result.snapshot.name)}' v{result.snapshot.version}</h1>"
        f"<p>run {esc(result.run_id)} · mode {esc(result.mode)} · exit {result.exit_code}</p>"
        "<table><tr><th>Agent</th><th>Verdict</th><th>Change</th><th>Rationale</th></tr>"
        f"{rows}</table>{replicate}"
        f"{'<ul>' + notes + '</ul>' if notes else ''}</body></html>\n"
    )
