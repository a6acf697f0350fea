"""The package's one error type and the exit codes it carries, as the docs define them
(prove-sweep-command.md's list, docs/comparing.md for `check`, docs/shared-building-blocks.md
for an unexpected failure)."""

from __future__ import annotations

from poisson_prove import errors
from poisson_prove.errors import ProveError


def test_exit_codes_are_the_documented_numbers() -> None:
    assert errors.EXIT_OK == 0  # ran to the end
    assert errors.EXIT_REFUSED == 1  # refused before anything ran, nothing written
    assert errors.EXIT_USAGE == 2  # the command line is wrong
    assert errors.EXIT_STOPPED == 3  # stopped or failed after work started
    assert errors.EXIT_WORSE == 4  # check: a failure outcome rose
    assert errors.EXIT_INCONCLUSIVE == 5  # check: too few episodes to see a rise
    assert errors.EXIT_UNEXPECTED == 70  # a bug: details in the errors log
    assert errors.EXIT_INTERRUPTED == 130  # Ctrl-C


def test_a_prove_error_carries_its_message_suggestions_and_exit_code() -> None:
    plain = ProveError("the spec has no [axes] table")
    assert (plain.message, plain.suggestions, plain.exit_code) == ("the spec has no [axes] table", (), 1)
    assert str(plain) == "the spec has no [axes] table"
    suggestions = (s for s in ["poisson-prove init --example"])  # any iterable, kept as a tuple
    usage = ProveError("--salt: not hex", suggestions=suggestions, exit_code=errors.EXIT_USAGE)
    assert usage.suggestions == ("poisson-prove init --example",) and usage.exit_code == 2
