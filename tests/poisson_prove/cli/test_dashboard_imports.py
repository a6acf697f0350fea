"""The page's file name the command line uses is the dashboard's own (the command looks for it by
that path before importing the dashboard; tests/poisson_prove/cli/test_sweep_imports.py holds that a
sweep into a store without a page imports none of the dashboard)."""

from __future__ import annotations

from poisson_prove.cli import dashboard as cli_dashboard
from poisson_prove.dashboard import DASHBOARD_FILE


def test_the_page_name_is_the_dashboards() -> None:
    assert cli_dashboard.DASHBOARD_FILE == DASHBOARD_FILE
