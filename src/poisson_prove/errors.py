"""The one error type library code raises, and `poisson-prove`'s exit codes (`ProveExit`); the CLI
renders an error as `error:` / `next:` lines and exits with the code it carries.

proveai has its own table (`proveai.errors.ProveAIExit`): the same number means different things
in the two command lines (3 is "stopped" here, "inconclusive" there), so the tables have
different names. docs/README.md's exit-code table is tested against both.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from prove_common.errors import INTERRUPTED_EXIT, UNEXPECTED_EXIT, USAGE_EXIT, UserError


class ProveExit(IntEnum):
    """`poisson-prove`'s exit codes, as the sweep command's docs define them."""

    OK = 0
    REFUSED = 1  # refused before anything ran; nothing written
    USAGE = USAGE_EXIT  # the command line is wrong
    STOPPED = 3  # stopped or failed after work started
    WORSE = 4  # `check`: a failure outcome rose
    INCONCLUSIVE = 5  # `check`: nothing rose, but too few episodes to see a rise of --max-mde
    UNEXPECTED = UNEXPECTED_EXIT  # an unexpected failure (a bug): details in the errors log
    INTERRUPTED = INTERRUPTED_EXIT  # Ctrl-C; what ran is kept


class ProveError(UserError):
    """A failure the user can act on (poisson-prove's): `message` is one line saying what is
    wrong and where; `suggestions` become `next:` lines; `exit_code` is one of `ProveExit`.
    """

    def __init__(
        self,
        message: str,
        *,
        suggestions: Sequence[str] = (),
        exit_code: int = ProveExit.REFUSED,
    ) -> None:
        super().__init__(message, suggestions=suggestions, exit_code=exit_code)
