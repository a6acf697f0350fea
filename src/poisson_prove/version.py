"""The package's version, in a module of its own so that modules of every layer can name it
without importing the package's public map (`poisson_prove/__init__.py`).

The one mechanism of both packages (`prove_common.version`): the installed distribution's
version, read on first use; `from poisson_prove.version import __version__` works as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prove_common.lazy import lazy_exports
from prove_common.version import DISTRIBUTION, package_version

if TYPE_CHECKING:
    from prove_common.version import __version__

__all__ = ["DISTRIBUTION", "__version__", "package_version"]

__getattr__, __dir__ = lazy_exports(__name__, {"__version__": "prove_common.version:__version__"})
