"""The one error type library code raises; the CLI renders it as `error:` / `next:` lines."""

from __future__ import annotations

from collections.abc import Sequence

from prove_common.errors import INTERRUPTED_EXIT, UNEXPECTED_EXIT, USAGE_EXIT, UserError

# Exit codes, as the sweep command's docs define them.
EXIT_OK = 0
EXIT_REFUSED = 1  # refused before anything ran; nothing written
EXIT_USAGE = USAGE_EXIT  # the command line is wrong
EXIT_STOPPED = 3  # stopped or failed after work started
EXIT_WORSE = 4  # `check`: a failure outcome rose
EXIT_INCONCLUSIVE = 5  # `check`: nothing rose, but too few episodes to see a rise of --max-mde
EXIT_UNEXPECTED = UNEXPECTED_EXIT  # an unexpected failure (a bug): details in the errors log
EXIT_INTERRUPTED = INTERRUPTED_EXIT


class ProveError(UserError):
    """A failure the user can act on (poisson-prove's): `message` is one line saying what is
    wrong and where; `suggestions` become `next:` lines; `exit_code` is one of the codes above.
    """

    def __init__(
        self,
        message: str,
        *,
        suggestions: Sequence[str] = (),
        exit_code: int = EXIT_REFUSED,
    ) -> None:
        super().__init__(message, suggestions=suggestions, exit_code=exit_code)
