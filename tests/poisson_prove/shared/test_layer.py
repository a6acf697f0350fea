"""poisson_prove.shared is the bottom layer both packages stand on: it imports nothing of
either package but `poisson_prove.errors`, and proveai reaches poisson_prove only through
public modules (no `_private` path), counting imports inside functions too."""

from __future__ import annotations

from tests.import_graph import imports


def test_shared_imports_only_errors_and_itself() -> None:
    edges = imports(["poisson_prove", "proveai"])
    upward = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.importer.startswith("poisson_prove.shared")
        and e.internal
        and not (e.target == "poisson_prove.errors" or e.target.startswith("poisson_prove.shared"))
    ]
    assert upward == []


def test_shared_function_level_imports_say_why() -> None:
    edges = imports(["poisson_prove"])
    unexplained = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.importer.startswith("poisson_prove.shared") and e.function_level and not e.reason
    ]
    assert unexplained == []


def test_proveai_imports_only_public_modules_of_poisson_prove() -> None:
    edges = imports(["poisson_prove", "proveai"])
    private = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.importer.startswith("proveai")
        and e.target.startswith("poisson_prove")
        and any(part.startswith("_") for part in e.target.split("."))
    ]
    assert private == []
    # and it does use the shared layer (the check above is not vacuous)
    shared = [e for e in edges if e.target.startswith("poisson_prove.shared")]
    assert any(e.importer.startswith("proveai") for e in shared)
