"""The snapshot package's place in proveai's layers, read from the source (module- and
function-level imports): no circle among its modules, nothing imported from the layers above
it (report, cli, pytest, ci), and a function-level import only with its reason beside it."""

from __future__ import annotations

from tests import import_graph

ABOVE_SNAPSHOT = ("proveai.report", "proveai.cli", "proveai.pytest", "proveai.ci")
ROOMS = ("proveai.snapshot", "proveai.pytest", "proveai.ci", "proveai.cli.snapshot",
         "proveai.cli._snapshot_output", "proveai.cli.ci", "proveai.report.verify_page")


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_no_import_circle_through_snapshot() -> None:
    circles = import_graph.cycles(import_graph.imports(["proveai"]))
    assert [c for c in circles if any(_within(m, ("proveai.snapshot",)) for m in c)] == []


def test_snapshot_imports_nothing_above_it() -> None:
    upward = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in import_graph.imports(["proveai"])
        if e.internal and _within(e.importer, ("proveai.snapshot",)) and _within(e.target, ABOVE_SNAPSHOT)
    ]
    assert upward == []


def test_function_level_imports_say_why() -> None:
    unexplained = [
        line
        for line in import_graph.unexplained_function_imports(import_graph.imports(["proveai"]))
        if _within(line.split(":", 1)[0], ROOMS)
    ]
    assert unexplained == []
