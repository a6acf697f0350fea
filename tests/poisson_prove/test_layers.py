"""poisson_prove's import graph holds the layers its package docstring lists: no circle between
modules, imports point down only (at the top of a module and inside functions alike), and a
function-level import only with its reason beside it (a heavy library: start-up)."""

from __future__ import annotations

import poisson_prove
from tests.import_graph import cycles, imports, layer_of, unexplained_function_imports, upward_imports

# Lowest first, as in src/poisson_prove/__init__.py; each entry a module or package prefix.
LAYERS = [
    ["errors", "version"],
    ["stats"],
    ["episode"],
    ["chaos"],
    ["backends"],
    ["design", "store"],
    ["sweep", "comparison", "inspection", "importers"],
    ["render", "dashboard"],
    ["cli", "examples"],
    ["__main__"],
]
PREFIXED = [[f"poisson_prove.{name}" for name in layer] for layer in LAYERS]

def _edges():
    return imports(["poisson_prove"])


def test_no_import_circle_between_modules() -> None:
    assert cycles(_edges()) == []


def test_imports_point_down_the_layers() -> None:
    # The public map (poisson_prove/__init__.py) is above every layer and imported by none.
    edges = [edge for edge in _edges() if edge.importer != "poisson_prove"]
    assert [f"{e.importer}:{e.line}" for e in edges if e.internal and e.target == "poisson_prove"] == []
    assert upward_imports(edges, PREFIXED) == []


def test_every_module_has_a_layer() -> None:
    modules = {edge.importer for edge in _edges()} - {"poisson_prove"}
    assert sorted(m for m in modules if layer_of(m, PREFIXED) is None) == []


def test_the_docstring_lists_these_layers() -> None:
    doc = (poisson_prove.__doc__ or "").split("\n0. ", 1)[1]
    entries = [entry.split("\n\n")[0] for entry in ("0. " + doc).split("\n")]
    text = {}
    for line in entries:
        head, _, rest = line.partition(". ")
        if head.isdigit():
            text[int(head)] = rest
        elif text:
            text[max(text)] += " " + line.strip()
    assert sorted(text) == list(range(len(LAYERS)))
    for number, layer in enumerate(LAYERS):
        assert [name for name in layer if name not in text[number]] == [], number


def test_function_level_imports_say_why() -> None:
    assert unexplained_function_imports(_edges()) == []
