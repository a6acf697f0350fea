"""`proveai analyze` is retired: any flags, exit 2 and a redirect to `proveai status`."""

from __future__ import annotations

from tests.conftest import assert_clean_error


def test_retired_analyze_exits_2_with_a_redirect(proveai_cli):
    result = proveai_cli("analyze", "--traces", "x")
    assert_clean_error(result, 2, "proveai analyze was retired", "written automatically at capture time")
    assert "next: proveai status --filter detection=flagged" in result.stderr
