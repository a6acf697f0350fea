"""proveai's error type: a ProveError whose default exit code is proveai's usage/input code."""

from __future__ import annotations

from collections.abc import Sequence

from poisson_prove.errors import ProveError

# proveai's exit codes (documented in docs/proveai-cli.md).
EXIT_OK = 0
EXIT_REGRESSION = 1  # an agent or edge regressed: the gate fails
EXIT_USAGE = 2  # argparse, input or I/O error
EXIT_INCONCLUSIVE = 3  # a mismatch could not be judged: never a silent pass
EXIT_UNEXPECTED = 70  # a crash: never shares a code with "regression"


class ProveAIError(ProveError):
    """A failure the user can act on, rendered as `error:` / `next:` lines."""

    def __init__(
        self, message: str, *, suggestions: Sequence[str] = (), exit_code: int = EXIT_USAGE
    ) -> None:
        super().__init__(message, suggestions=suggestions, exit_code=exit_code)
