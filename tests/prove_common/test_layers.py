"""prove_common is the bottom layer both packages stand on: it imports nothing of either
package, and proveai reaches poisson_prove only through public modules (no `_private` path)
and for statistics only, counting imports inside functions and under TYPE_CHECKING too."""

from __future__ import annotations

from tests.import_graph import imports


def test_prove_common_imports_neither_package() -> None:
    edges = imports(["prove_common", "poisson_prove", "proveai"])
    upward = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.importer.startswith("prove_common") and e.internal and not e.target.startswith("prove_common")
    ]
    assert upward == []
    assert any(e.importer.startswith("prove_common") for e in edges)  # it was scanned


def test_prove_common_function_level_imports_say_why() -> None:
    edges = imports(["prove_common"])
    unexplained = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.importer.startswith("prove_common") and e.function_level and not e.reason
    ]
    assert unexplained == []


def test_proveai_imports_only_public_modules_of_poisson_prove() -> None:
    edges = imports(["prove_common", "poisson_prove", "proveai"])
    private = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.importer.startswith("proveai")
        and e.target.startswith("poisson_prove")
        and any(part.startswith("_") for part in e.target.split("."))
    ]
    assert private == []
    # and it does use the shared kit (the check above is not vacuous)
    shared = [e for e in edges if e.target.startswith("prove_common")]
    assert any(e.importer.startswith("proveai") for e in shared)


def test_proveai_uses_poisson_prove_for_statistics_and_the_episode_recorder_only() -> None:
    edges = imports(["prove_common", "poisson_prove", "proveai"])
    beyond = sorted(
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.importer.startswith("proveai")
        and e.target.startswith("poisson_prove")
        and not e.target.startswith("poisson_prove.stats")
        # the episode recorder's registration point: @monitor records into a sweep's episodes
        and e.target != "poisson_prove.episode.recording"
    )
    assert beyond == []
