"""proveai's error type: a failure the user can act on, by default with proveai's usage/input
exit code; and proveai's exit codes."""

from __future__ import annotations

from collections.abc import Sequence

from prove_common.errors import UNEXPECTED_EXIT, USAGE_EXIT, UserError

# proveai's exit codes (documented in docs/proveai-cli.md).
EXIT_OK = 0
EXIT_REGRESSION = 1  # an agent or edge regressed: the gate fails
EXIT_USAGE = USAGE_EXIT  # argparse, input or I/O error
EXIT_INCONCLUSIVE = 3  # a mismatch could not be judged: never a silent pass
EXIT_UNEXPECTED = UNEXPECTED_EXIT  # a crash: never shares a code with "regression"


class ProveAIError(UserError):
    """A failure the user can act on, rendered as `error:` / `next:` lines."""

    def __init__(
        self, message: str, *, suggestions: Sequence[str] = (), exit_code: int = EXIT_USAGE
    ) -> None:
        super().__init__(message, suggestions=suggestions, exit_code=exit_code)
