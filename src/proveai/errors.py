"""proveai's error type, `ProveAIError`: a failure the user can act on, by default with proveai's
usage/input exit code; and proveai's exit codes (`ProveAIExit`, the table of docs/README.md's
"Exit codes at a glance", which tests/docs/test_docs_exit_codes.py holds).

poisson-prove has its own table (`poisson_prove.errors.ProveExit`): the same number means
different things in the two command lines (3 is "inconclusive" here, "stopped" there), so the
tables have different names.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from prove_common.errors import INTERRUPTED_EXIT, UNEXPECTED_EXIT, USAGE_EXIT, UserError


class ProveAIExit(IntEnum):
    """`proveai`'s exit codes."""

    OK = 0
    REGRESSION = 1  # an agent or edge regressed: the gate fails
    USAGE = USAGE_EXIT  # argparse, input or I/O error
    INCONCLUSIVE = 3  # a mismatch could not be judged: never a silent pass
    UNEXPECTED = UNEXPECTED_EXIT  # a crash: never shares a code with "regression"
    INTERRUPTED = INTERRUPTED_EXIT  # Ctrl-C


class ProveAIError(UserError):
    """A failure the user can act on, rendered as `error:` / `next:` lines."""

    def __init__(
        self, message: str, *, suggestions: Sequence[str] = (), exit_code: int = ProveAIExit.USAGE
    ) -> None:
        super().__init__(message, suggestions=suggestions, exit_code=exit_code)
