"""A package's public names imported on first use: the one helper behind every lazy public map.

A package's `__init__.py` lists its public names in `__all__`, imports them for type checkers
under `if TYPE_CHECKING:`, and hands the same names to `lazy_exports`, which returns the
module's `__getattr__` and `__dir__` (PEP 562):

    __getattr__, __dir__ = lazy_exports(__name__, {
        "compare": "poisson_prove.comparison.compare_runs:compare",  # an attribute of a module
        "mock": "proveai.mock",  # a module itself
    })

A name is imported the first time it is read (`package.name`, `from package import name`,
`from package import *`) and then stored in the module, so the next read is a plain lookup
and `__getattr__` is not called again. `import package` loads none of them: `import
poisson_prove`, `import proveai` and every `--help` stay instant. Each package's public-API
test checks that `__all__`, the `TYPE_CHECKING` imports and the map name the same things.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    module_name: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the module `module_name`, serving `exports`.

    `exports` maps each public name to where it lives: `"package.module:attribute"`, or
    `"package.module"` for the module itself. An unknown name raises AttributeError, worded as
    Python's own ("module 'x' has no attribute 'y'"); `__dir__` lists the module's names and
    every export, sorted.
    """
    module = sys.modules[module_name]
    where = dict(exports)

    def __getattr__(name: str) -> Any:
        target = where.get(name)
        if target is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        source, _, attribute = target.partition(":")
        value: Any = importlib.import_module(source)
        if attribute:
            value = getattr(value, attribute)
        setattr(module, name, value)  # the next read finds it without calling __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *where})

    return __getattr__, __dir__
