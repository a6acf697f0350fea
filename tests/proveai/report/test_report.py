"""proveai.report is the replay report's public address (the SDK readme's
`from proveai.report import render_html, write_html_report`): the functions drawn in
proveai.render.report, nothing else."""

from __future__ import annotations

import proveai.render.report
import proveai.report


def test_the_public_address_names_the_report_functions() -> None:
    assert proveai.report.__all__ == ["render_html", "write_html_report"]
    assert proveai.report.render_html is proveai.render.report.render_html
    assert proveai.report.write_html_report is proveai.render.report.write_html_report
