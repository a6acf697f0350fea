"""The package's one error type and the exit codes it carries, as the docs define them
(prove-sweep-command.md's list, docs/comparing.md for `check`, docs/shared-building-blocks.md
for an unexpected failure; docs/README.md's table is held by tests/docs/test_docs_exit_codes.py)."""

from __future__ import annotations

import pickle

from poisson_prove.errors import ProveError, ProveExit
from prove_common.errors import UserError


def test_exit_codes_are_the_documented_numbers() -> None:
    assert {code.name: int(code) for code in ProveExit} == {
        "OK": 0,  # ran to the end
        "REFUSED": 1,  # refused before anything ran, nothing written
        "USAGE": 2,  # the command line is wrong
        "STOPPED": 3,  # stopped or failed after work started
        "WORSE": 4,  # check: a failure outcome rose
        "INCONCLUSIVE": 5,  # check: too few episodes to see a rise
        "UNEXPECTED": 70,  # a bug: details in the errors log
        "INTERRUPTED": 130,  # Ctrl-C
    }


def test_a_prove_error_carries_its_message_suggestions_and_exit_code() -> None:
    plain = ProveError("the spec has no [axes] table")
    assert (plain.message, plain.suggestions, plain.exit_code) == ("the spec has no [axes] table", (), 1)
    assert str(plain) == "the spec has no [axes] table" and isinstance(plain, UserError)
    suggestions = (s for s in ["poisson-prove init --example"])  # any iterable, kept as a tuple
    usage = ProveError("--salt: not hex", suggestions=suggestions, exit_code=ProveExit.USAGE)
    assert usage.suggestions == ("poisson-prove init --example",) and usage.exit_code == 2


def test_an_exit_code_is_a_number_wherever_it_goes() -> None:
    # a worker's error crosses a process boundary; a code is written into JSON and f-strings
    back = pickle.loads(pickle.dumps(ProveError("x", exit_code=ProveExit.STOPPED)))
    assert back.exit_code is ProveExit.STOPPED and f"exit {back.exit_code}" == "exit 3"
