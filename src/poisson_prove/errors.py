"""The one error type library code raises; the CLI renders it as `error:` / `next:` lines."""

from __future__ import annotations

from collections.abc import Sequence

# Exit codes, as the sweep command's docs define them.
EXIT_OK = 0
EXIT_REFUSED = 1  # refused before anything ran; nothing written
EXIT_USAGE = 2  # the command line is wrong
EXIT_STOPPED = 3  # stopped or failed after work started
EXIT_WORSE = 4  # `check`: a failure outcome rose
EXIT_INCONCLUSIVE = 5  # `check`: nothing rose, but too few episodes to see a rise of --max-mde
EXIT_UNEXPECTED = 70  # an unexpected failure (a bug): details in the errors log
EXIT_INTERRUPTED = 130


class ProveError(Exception):
    """A failure the user can act on.

    `message` is one line saying what is wrong and where; `suggestions` become `next:` lines;
    `exit_code` is the documented exit code of the command that failed.
    """

    def __init__(
        self,
        message: str,
        *,
        suggestions: Sequence[str] = (),
        exit_code: int = EXIT_REFUSED,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.suggestions = tuple(suggestions)
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message
