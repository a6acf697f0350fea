"""The command line's shell: --version and a usage error."""

from __future__ import annotations

from tests.conftest import assert_clean_error


def test_version_and_usage_error(prove) -> None:
    result = prove("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("poisson-prove ")
    bad = prove("--no-such-flag")
    assert_clean_error(bad, 2, "--no-such-flag")
    assert bad.stdout == ""
