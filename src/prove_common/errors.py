"""The base of both packages' error types: a failure the user can act on.

Library code of either package raises a subclass (`poisson_prove.ProveError`,
`proveai.ProveAIError`); the command line renders it as one `error:` line, `next:` lines and
the exit code it carries. Each package keeps its own exit-code table; this module holds only
the codes every command of both shares, by shell convention.
"""

from __future__ import annotations

from collections.abc import Sequence

USAGE_EXIT = 2  # the command line is wrong (argparse's own code)
UNEXPECTED_EXIT = 70  # an unexpected failure, a bug (EX_SOFTWARE): never a code with a meaning
INTERRUPTED_EXIT = 130  # Ctrl-C (128 + SIGINT)


class UserError(Exception):
    """A failure the user can act on.

    `message` is one line saying what is wrong and where; `suggestions` become `next:` lines;
    `exit_code` is the documented exit code of the command that failed.
    """

    def __init__(self, message: str, *, suggestions: Sequence[str] = (), exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.suggestions = tuple(suggestions)
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message
