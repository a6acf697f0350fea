"""The replay report's public address: `from proveai.report import render_html, write_html_report`.

The report is drawn in proveai.render.report, with the rest of proveai's drawing.
"""

from __future__ import annotations

from proveai.render.report import render_html, write_html_report

__all__ = ["render_html", "write_html_report"]
