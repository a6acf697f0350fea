"""The one version of proveai: the installed distribution's (pyproject.toml is its only source).

The one mechanism of both packages (`prove_common.version`), read on first use, not at import:
importlib.metadata costs ~20 ms, which `import proveai` (all an agent decorated with @monitor
needs) should not pay. `from proveai.version import __version__` works as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prove_common.lazy import lazy_exports
from prove_common.version import DISTRIBUTION, package_version

if TYPE_CHECKING:
    from prove_common.version import __version__

__all__ = ["DISTRIBUTION", "__version__", "package_version"]

__getattr__, __dir__ = lazy_exports(__name__, {"__version__": "prove_common.version:__version__"})
