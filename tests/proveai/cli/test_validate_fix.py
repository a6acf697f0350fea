"""`proveai validate-fix` is retired: exit 2 and a redirect to `proveai run --hold-at`."""

from __future__ import annotations

from tests.conftest import assert_clean_error


def test_retired_validate_fix_exits_2_with_a_redirect(proveai_cli):
    result = proveai_cli("validate-fix")
    assert_clean_error(result, 2, "proveai validate-fix was retired")
    assert "next: proveai run --hold-at <span_id> --override AGENT=PATH" in result.stderr
