"""The one version of both packages: that of the installed distribution they ship in,
`poisson-prove` (pyproject.toml is its only source), read from its metadata as Inspect AI
reads its own, with a fallback for a source tree run without installing.

Read on first use, never at import: importlib.metadata costs ~20 ms, which `import
poisson_prove`, `import proveai` (all an agent decorated with @monitor needs) and every
`--help` should not pay. `poisson_prove.version` and `proveai.version` serve this value as
their `__version__`; the command lines pass `package_version` itself, called only for
`--version`.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

DISTRIBUTION = "poisson-prove"
UNKNOWN = "0.0.0+unknown"  # a never-installed source tree: no metadata to read

if TYPE_CHECKING:
    __version__: str  # computed on first read (module __getattr__ below)


def distribution_version(name: str = DISTRIBUTION) -> str:
    """The installed version of the distribution `name`, or UNKNOWN when it is not installed."""
    # importlib.metadata: ~20 ms to import, paid only when a version is asked for
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return UNKNOWN


@cache
def package_version() -> str:
    """The installed poisson-prove's version (both packages'), read once."""
    return distribution_version(DISTRIBUTION)


def __getattr__(name: str) -> str:
    # the one computed attribute; everything else is looked up as usual
    if name == "__version__":
        return package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
