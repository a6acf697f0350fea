"""What a regular (non-editable) install ships: every folder of modules under src/ is a package
setuptools finds. A folder without __init__.py still imports from an editable install (as a
namespace package) but is left out of the wheel, so `proveai run` would fail installed."""

from __future__ import annotations

from setuptools import find_packages

from tests.import_graph import SRC


def test_every_folder_of_modules_is_a_package_the_wheel_ships() -> None:
    shipped = set(find_packages(str(SRC)))
    folders = {
        ".".join(path.parent.relative_to(SRC).parts)
        for path in SRC.rglob("*.py")
        if "egg-info" not in str(path)
    }
    assert sorted(folders - shipped) == []
