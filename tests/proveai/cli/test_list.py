"""`proveai list` (the legacy view) through the installed console script."""

from __future__ import annotations

import re

from tests.conftest import assert_clean_error
from tests.proveai.cli.status_kit import (
    columns,
    rows,
    status_store,  # noqa: F401  (the `store` fixture)
)


def test_list_legacy_view(proveai_cli, store):
    result = proveai_cli("list", "--no-color")
    assert result.returncode == 0 and "\x1b" not in result.stdout
    header = result.stdout.splitlines()[0]
    assert columns(header) == ["Trace ID", "Version", "Agents", "Outcome", "Timestamp"]
    assert [r[0] for r in rows(result.stdout)] == [store["plain"], store["bad"], store["good"], store["old"]]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", rows(result.stdout)[1][-1])
    good = proveai_cli("list", "--outcome", "good", "--version", "v3")
    assert [r[0] for r in rows(good.stdout)] == [store["good"]]
    assert_clean_error(proveai_cli("list", "--outcome", "great"), 2, "outcome must be one of good, bad, skip")
