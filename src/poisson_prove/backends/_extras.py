"""Optional SDKs: imported only when their backend is chosen, refused cleanly when missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from poisson_prove.errors import ProveError, ProveExit


def require(extra: str, module: str) -> ModuleType:
    """Import `module` (installed by the `extra` extra) or raise ProveError with the pip line."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ProveError(
            f"--backend {extra} needs the {extra} extra ({module} is not installed: {exc})",
            suggestions=[f"pip install 'poisson-prove[{extra}]'"],
            exit_code=ProveExit.REFUSED,
        ) from exc
