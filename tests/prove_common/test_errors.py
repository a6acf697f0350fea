"""The base of both packages' errors, and the exit codes both command lines share: each
package's own table (ProveExit, ProveAIExit) takes usage, unexpected and interrupted from here,
and holds every other code under its own name."""

from __future__ import annotations

from poisson_prove.errors import ProveError, ProveExit
from prove_common.errors import INTERRUPTED_EXIT, UNEXPECTED_EXIT, USAGE_EXIT, UserError
from proveai.errors import ProveAIError, ProveAIExit


def test_a_user_error_carries_one_line_its_next_lines_and_its_code() -> None:
    plain = UserError("the store is a file")
    assert (str(plain), plain.message, plain.suggestions, plain.exit_code) == (
        "the store is a file", "the store is a file", (), 1
    )
    told = UserError("no such run", suggestions=iter(["poisson-prove runs"]), exit_code=USAGE_EXIT)
    assert told.suggestions == ("poisson-prove runs",) and told.exit_code == 2


def test_both_packages_errors_are_user_errors() -> None:
    assert issubclass(ProveError, UserError) and issubclass(ProveAIError, UserError)


def test_the_shared_codes_are_the_same_in_both_tables() -> None:
    assert (USAGE_EXIT, UNEXPECTED_EXIT, INTERRUPTED_EXIT) == (2, 70, 130)
    for shared in ("USAGE", "UNEXPECTED", "INTERRUPTED"):
        assert ProveExit[shared] == ProveAIExit[shared]
    # names in both tables: the shared codes, 0, and INCONCLUSIVE, which is 5 in one and 3 in the other
    same_name = {c.name for c in ProveExit} & {c.name for c in ProveAIExit}
    assert same_name == {"OK", "USAGE", "INCONCLUSIVE", "UNEXPECTED", "INTERRUPTED"}
    assert ProveExit.INCONCLUSIVE != ProveAIExit.INCONCLUSIVE  # why the tables have two names
