"""The one version of both packages: that of the installed distribution they ship in,
`poisson-prove` (pyproject.toml is its only source), read from its metadata as Inspect AI
reads its own, with a fallback for a source tree run without installing.

Read on first use, never at import: importlib.metadata costs ~20 ms, which `import
poisson_prove`, `import proveai` (all an agent decorated with @monitor needs) and every
`--help` should not pay. `poisson_prove.version` and `proveai.version` serve this value as
their `__version__`; the command lines pass `package_version` itself, called only for
`--version`. A sweep stores it in every manifest, so it is first read the way importlib.metadata
finds it (the first `<name>-*.dist-info` or `.egg-info` folder on `sys.path`, its METADATA or
PKG-INFO's `Version:` header) without importing importlib.metadata and the email parser; any
layout that reading is not sure of (a zip or `.egg` on the path, another distribution finder,
an unusual header block) is left to importlib.metadata itself.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING

DISTRIBUTION = "poisson-prove"
UNKNOWN = "0.0.0+unknown"  # a never-installed source tree: no metadata to read

if TYPE_CHECKING:
    __version__: str  # computed on first read (module __getattr__ below)


_HEADER = re.compile(r"[\041-\071\073-\176]*:")  # a header line, as the email parser reads one


def _metadata_text(folder: str) -> str | None:
    for member in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, member), encoding="utf-8") as file:
                text = file.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            continue
        if text:
            return text
    return None


def _version_header(text: str) -> str | None:
    for line in re.split(r"\r\n|\r|\n", text):
        if not line:
            return None  # the end of the headers
        if not _HEADER.match(line):
            return None  # a continuation or a line the parser would end the headers at
        name, _, value = line.partition(":")
        if name.lower() == "version":
            return value.lstrip(" \t") or None
    return None


def _version_on_path(name: str) -> str | None:
    """`name`'s version where importlib.metadata would find it on sys.path, or None whenever this
    reading might not agree with it (importlib.metadata answers then)."""
    if [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None] != [PathFinder]:
        return None
    wanted = re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")
    for root in sys.path:
        if not isinstance(root, str) or os.path.basename(root).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root or ".")
        except OSError:
            if os.path.isfile(root):  # a zip on the path
                return None
            continue
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                stem = low.rpartition(".")[0].partition("-")[0]
                if re.sub(r"[-_.]+", "-", stem).lower().replace("-", "_") == wanted:
                    text = _metadata_text(os.path.join(root, child))
                    return None if text is None else _version_header(text)
    return None


def distribution_version(name: str = DISTRIBUTION) -> str:
    """The installed version of the distribution `name`, or UNKNOWN when it is not installed."""
    found = _version_on_path(name)
    if found is not None:
        return found
    # importlib.metadata: ~20 ms to import, paid only when the folder read above is not sure
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
