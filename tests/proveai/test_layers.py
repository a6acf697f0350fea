"""proveai's layers (its package docstring) hold: imports point down only, no circle, and a
function-level import only for a heavy library, with its reason beside it."""

from __future__ import annotations

from tests.import_graph import SRC, Import, cycles, imports, unexplained_function_imports, upward_imports

# Lowest first; a module may import its own package, a lower layer, or poisson_prove's public names.
LAYERS = [
    ["proveai.errors", "proveai.version"],
    ["proveai.traces"],  # the trace records the store reads and writes
    ["proveai.store"],  # every file under ./proveai/
    ["proveai.providers"],
    ["proveai.cache", "proveai.mock"],
    ["proveai.diff"],
    ["proveai.capture"],
    ["proveai.replay"],
    ["proveai.ci"],  # GitHub Actions: the workflow `ci init` writes, PR targeting, the step summary
    ["proveai.snapshot", "proveai.engine"],
    ["proveai.render", "proveai.narrative"],  # all drawing (terminal and HTML); plain-language narratives
    ["proveai.report", "proveai.pytest"],  # the replay report's public address; the pytest plugin
    ["proveai.cli"],
    ["proveai", "proveai.__main__"],  # the public map and `python -m proveai`: nothing imports them
]

# The pytest plugin is loaded by every pytest run in an environment where proveai is installed
# (its pytest11 entry point), so it imports the snapshot grader and the mocks only inside the
# fixtures that use them; test_plugin_loads_light_in_any_pytest_run holds that.
LOADED_BY_EVERY_PYTEST_RUN = "proveai.pytest.plugin"


def _edges() -> list[Import]:
    return imports(["proveai"])


def test_no_import_circle() -> None:
    assert cycles(_edges()) == []


def test_imports_point_down_only() -> None:
    assert upward_imports(_edges(), LAYERS) == []


def test_every_function_level_import_says_why() -> None:
    assert unexplained_function_imports(_edges()) == []


def test_internal_modules_are_imported_at_the_top() -> None:
    """A function-level import of proveai's own modules dodges a circle or a cost nobody measured."""
    inside = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in _edges()
        if e.function_level and e.internal and e.importer != LOADED_BY_EVERY_PYTEST_RUN
    ]
    assert inside == []


def test_poisson_prove_only_through_public_modules() -> None:
    private = [
        f"{e.importer}:{e.line}" for e in _edges()
        if not e.internal and e.target == "poisson_prove" and _private_poisson_import(e)
    ]
    assert private == []


def _private_poisson_import(edge: Import) -> bool:
    """True when the import statement names a _private poisson_prove module (e.g. poisson_prove._suggest)."""
    path = SRC / (edge.importer.replace(".", "/") + ".py")
    if not path.exists():
        path = SRC / edge.importer.replace(".", "/") / "__init__.py"
    statement = path.read_text(encoding="utf-8").splitlines()[edge.line - 1].strip()
    module = statement.split()[1]  # "from poisson_prove.x import ..." or "import poisson_prove.x"
    return any(part.startswith("_") for part in module.split("."))
