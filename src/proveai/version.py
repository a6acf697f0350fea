"""The one version of proveai: the installed distribution's (pyproject.toml is its only source).

Read on first use, not at import: importlib.metadata costs ~20 ms, which `import proveai`
(all an agent decorated with @monitor needs) should not pay. `from proveai.version import
__version__` works as usual.
"""

from __future__ import annotations

from functools import cache

DISTRIBUTION = "poisson-prove"


@cache
def package_version() -> str:
    """The installed poisson-prove's version ("0.0.0+unknown" from a never-installed source tree)."""
    # importlib.metadata: ~20 ms to import, paid only when a version is asked for
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0.0.0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return package_version()
    raise AttributeError(f"module 'proveai.version' has no attribute {name!r}")
