"""The flags of `poisson-prove sweep`: misused ones exit 2 with one error line and nothing
written, and --help lists every documented flag."""

from __future__ import annotations

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import seeded_spec, tree


@pytest.mark.parametrize(
    "args",
    [
        ["--salt", "00112233445566778899aabbccddeeff", "--pair-with", "latest"],
        ["--salt", "00112233", "--resume", "x"],
        ["--backend", "cloud"],
        ["--target", "agent.rollout"],
        ["--resume", "--name", "other"],  # --target with --resume confirms the run's own target
    ],
)
def test_command_line_errors_exit_2(prove, workdir, args: list[str]) -> None:
    seeded_spec(workdir)
    before = tree(workdir)
    result = prove("sweep", *args, "--yes")
    assert_clean_error(result, 2)
    assert result.stdout == ""
    assert tree(workdir) == before


def test_bad_salt_exits_2(prove, workdir) -> None:
    seeded_spec(workdir)
    assert_clean_error(prove("sweep", "--salt", "xyz", "--yes"), 2, "--salt")


def test_help_lists_every_documented_flag(prove) -> None:
    result = prove("sweep", "--help")
    assert result.returncode == 0
    for flag in (
        "--target pkg.module:rollout",
        "--replicates N",
        "--salt HEX | --pair-with RUN | --resume [RUN]",
        "--name TEXT",
        "--episode-timeout S",
        "--max-rollouts N",
        "--batch-size N",
        "--max-mde FRACTION",
        "--dry-run",
        "--yes",
        "--json",
        "--concurrency N",
        "--infra-retries N",
        "--max-cost USD",
        "--est-seconds S",
        "--app-name NAME",
        "--image SECTION",
        "--store PATH",
        "--plain",
        "--debug",
        "remote backends (override the [modal] table;",
        "poisson-prove sweep --target my_agent:rollout_patched --pair-with latest --yes",
    ):
        assert flag in result.stdout, flag
