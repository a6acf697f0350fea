"""proveai's error type and exit codes (docs/README.md's table: tests/docs/test_docs_exit_codes.py)."""

from __future__ import annotations

import json

from prove_common.errors import UserError
from proveai.errors import ProveAIError, ProveAIExit


def test_exit_codes_are_the_documented_numbers() -> None:
    assert {code.name: int(code) for code in ProveAIExit} == {
        "OK": 0,  # no regression
        "REGRESSION": 1,  # the gate fails
        "USAGE": 2,  # usage, input or I/O error
        "INCONCLUSIVE": 3,  # a change could not be judged (strict judge)
        "UNEXPECTED": 70,  # a crash
        "INTERRUPTED": 130,  # Ctrl-C
    }


def test_an_error_defaults_to_the_usage_code_and_is_a_user_error() -> None:
    plain = ProveAIError("no snapshots in proveai/snapshots", suggestions=["proveai snapshot init"])
    assert plain.exit_code is ProveAIExit.USAGE and isinstance(plain, UserError)
    assert str(plain) == "no snapshots in proveai/snapshots"
    assert plain.suggestions == ("proveai snapshot init",)


def test_a_code_is_written_as_a_number() -> None:
    # verify manifests and run manifests store the code in JSON
    assert json.loads(json.dumps({"exit_code": ProveAIExit.REGRESSION})) == {"exit_code": 1}
    assert f"{ProveAIExit.INCONCLUSIVE}" == "3"
