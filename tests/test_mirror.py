"""Tests mirror src/: the tests of `src/<pkg>/<path>/<module>.py` are found in
`tests/<pkg>/<path>/test_<module>.py` or `tests/<pkg>/<path>/test_<module>_<anything>.py` (a
leading underscore of the module dropped, `__main__` named `main`), so each module's tests sit
beside its exact name, and every module has such a file. tests/e2e and tests/docs hold flows
and doc examples and are exempt; helpers, kits and conftest.py files are not test files and
are not checked."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prove_common", "poisson_prove", "proveai")

# Cross-cutting files: they test a rule over the whole package, not one module.
ALLOWED = {
    "poisson_prove/test_layers.py",  # the import graph's layers, over every module
    "poisson_prove/test_public_api.py",  # the names the docs promise, over every module
    "prove_common/test_layers.py",  # prove_common imports neither package, over all three
    "poisson_prove/cli/test_main.py",  # the command line's shell (cli/__init__.py): --version
    "proveai/test_layers.py",  # the import graph's layers, over every module
    "proveai/test_public_api.py",  # the names the docs promise, over every module
    "proveai/cli/test_main.py",  # the command line's shell (cli/__init__.py): --version, --help
}

def module_name(path: Path) -> str:
    """What a test file is named after for the module at `path`: its stem, a leading
    underscore dropped (`_schedule.py` gives `schedule`), a dunder's underscores both sides
    (`__main__.py` gives `main`)."""
    stem = path.stem
    if stem.startswith("__") and stem.endswith("__") and len(stem) > 4:
        return stem[2:-2]
    return stem.lstrip("_")


def names_in(src_folder: Path) -> set[str]:
    """What a test file in the mirror of `src_folder` may be named after: its modules, its
    subpackages, and the package itself (what its `__init__.py` defines, e.g.
    report/test_report.py for `render_html`)."""
    names = {src_folder.name}
    for entry in src_folder.iterdir():
        if entry.is_dir() and (entry / "__init__.py").exists():
            names.add(entry.name)
        elif entry.suffix == ".py" and entry.stem != "__init__":
            names.add(module_name(entry))
    return names


def named_after(test_file: Path, names: set[str]) -> str | None:
    """The name `test_file` is the tests of: `test_<name>.py` or `test_<name>_<anything>.py`,
    the longest such name (test_sweep_args.py is sweep_args's, not sweep's); None when the file
    names none of `names` (a bare prefix does not count: test_runx.py is not run's)."""
    subject = test_file.stem.removeprefix("test_")
    matching = [name for name in names if subject == name or subject.startswith(f"{name}_")]
    return max(matching, key=len) if matching else None


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
        names = names_in(src_folder)
        if named_after(test_file, names) is None:
            where = f"src/{package}/{folder.as_posix()}".removesuffix("/.")
            found.append(
                f"tests/{relative}: names no module of {where} ({', '.join(sorted(names))})"
            )
    return found


def only_reexports(module: Path) -> bool:
    """True for a module that defines nothing of its own: a docstring, imports, `__all__` (and
    dunder assignments such as a lazy map's `__getattr__, __dir__`), `if TYPE_CHECKING:` imports."""

    def reexport(node: ast.stmt) -> bool:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return isinstance(node.value.value, str)  # a docstring
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n for t in targets for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
            return all(isinstance(n, ast.Name) and n.id.startswith("__") for n in names)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            return all(reexport(inner) for inner in node.body + node.orelse)
        return False

    return all(reexport(node) for node in ast.parse(module.read_text(encoding="utf-8")).body)


def modules_without_tests(package: str) -> list[str]:
    """Each module of `src/<package>` (its `__init__.py` files and re-export-only modules
    excepted) that no test file in the mirror folder is named after, as `<package>/<path>`."""
    src_root = ROOT / "src" / package
    tests_root = ROOT / "tests" / package
    found = []
    for module in sorted(src_root.rglob("*.py")):
        if module.name == "__init__.py" or only_reexports(module):
            continue
        folder = module.parent.relative_to(src_root)
        test_folder = tests_root / folder
        names = names_in(module.parent)
        tested = test_folder.is_dir() and any(
            named_after(test_file, names) == module_name(module)
            for test_file in test_folder.glob("test_*.py")
            if test_file.relative_to(ROOT / "tests").as_posix() not in ALLOWED
        )
        if not tested:
            found.append(module.relative_to(ROOT / "src").as_posix())
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_tests_mirror_src(package: str) -> None:
    problems = misplaced(package)
    assert not problems, "test files not beside their module's name:\n" + "\n".join(problems)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_has_a_test_file_under_its_name(package: str) -> None:
    untested = modules_without_tests(package)
    assert not untested, (
        "modules without tests/<pkg>/<path>/test_<module>*.py (write one, or move the tests that "
        "are really about the module there):\n" + "\n".join(untested)
    )


def test_the_name_rule_is_the_exact_name_with_an_optional_suffix(tmp_path: Path) -> None:
    names = {"run", "running", "sweep", "sweep_args", "main"}
    assert named_after(tmp_path / "test_run.py", names) == "run"
    assert named_after(tmp_path / "test_run_damage.py", names) == "run"
    assert named_after(tmp_path / "test_running_library.py", names) == "running"
    assert named_after(tmp_path / "test_sweep_args.py", names) == "sweep_args"
    assert named_after(tmp_path / "test_sweep_budget.py", names) == "sweep"
    assert named_after(tmp_path / "test_runx.py", names) is None  # a bare prefix names nothing
    assert named_after(tmp_path / "test_r.py", names) is None
    assert module_name(Path("__main__.py")) == "main"
    assert module_name(Path("_schedule.py")) == "schedule"
    assert module_name(Path("plain.py")) == "plain"


def test_a_module_that_only_reexports_needs_no_tests_of_its_own(tmp_path: Path) -> None:
    shim = tmp_path / "shim.py"
    shim.write_text(
        '"""Old address."""\nfrom __future__ import annotations\nfrom typing import TYPE_CHECKING\n'
        "from a.b import c\nif TYPE_CHECKING:\n    from a.b import d\n__all__ = ['c']\n",
        encoding="utf-8",
    )
    assert only_reexports(shim)
    shim.write_text('"""Old address."""\nfrom a.b import c\nLIMIT = 3\n', encoding="utf-8")
    assert not only_reexports(shim)
    shim.write_text("from a.b import c\n\ndef f() -> None:\n    pass\n", encoding="utf-8")
    assert not only_reexports(shim)
