"""Tests mirror src/: the tests of `src/<pkg>/<path>/<module>.py` are found in
`tests/<pkg>/<path>/test_<module>*.py` (a leading underscore of the module dropped), so each
module's tests sit beside its name. tests/e2e and tests/docs hold flows and doc examples and
are exempt; helpers, kits and conftest.py files are not test files and are not checked."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Cross-cutting files: they test a rule over the whole package, not one module.
ALLOWED = {
    "poisson_prove/test_layers.py",  # the import graph's layers, over every module
    "poisson_prove/test_public_api.py",  # the names the docs promise, over every module
    "prove_common/test_layers.py",  # prove_common imports neither package, over all three
    "poisson_prove/cli/test_main.py",  # the command line's shell (cli/__init__.py): --version
    "proveai/test_layers.py",  # the import graph's layers, over every module
    "proveai/cli/test_main.py",  # the command line's shell (cli/__init__.py): --version, --help
}


def names_in(src_folder: Path) -> set[str]:
    """What a test file in the mirror of `src_folder` may be named after: its modules (a leading
    underscore dropped, so `_schedule.py` gives `schedule`), its subpackages, and the package
    itself (what its `__init__.py` defines, e.g. report/test_report.py for `render_html`)."""
    names = {src_folder.name}
    for entry in src_folder.iterdir():
        if entry.is_dir() and (entry / "__init__.py").exists():
            names.add(entry.name)
        elif entry.suffix == ".py" and entry.stem not in ("__init__",):
            names.add(entry.stem.lstrip("_"))
    return names


def misplaced(package: str) -> list[str]:
    """Each test file of `tests/<package>` whose folder mirrors no src folder, or whose name
    names no module or subpackage of that folder, with the reason."""
    tests_root = ROOT / "tests" / package
    src_root = ROOT / "src" / package
    found = []
    for test_file in sorted(tests_root.rglob("test_*.py")):
        relative = test_file.relative_to(ROOT / "tests").as_posix()
        if relative in ALLOWED:
            continue
        folder = test_file.parent.relative_to(tests_root)
        src_folder = src_root / folder
        if not (src_folder / "__init__.py").exists():
            found.append(f"tests/{relative}: no folder src/{package}/{folder.as_posix()}")
            continue
        subject = test_file.stem.removeprefix("test_")
        names = names_in(src_folder)
        if not any(subject.startswith(name) for name in names):
            where = f"src/{package}/{folder.as_posix()}".removesuffix("/.")
            found.append(
                f"tests/{relative}: names no module of {where} ({', '.join(sorted(names))})"
            )
    return found


@pytest.mark.parametrize("package", ["prove_common", "poisson_prove", "proveai"])
def test_tests_mirror_src(package: str) -> None:
    problems = misplaced(package)
    assert not problems, "test files not beside their module's name:\n" + "\n".join(problems)
