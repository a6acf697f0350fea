"""Reading a package's public map: what its `__init__.py` declares for type checkers and for
the interpreter, and its public members as a fresh interpreter sees them (the public-API tests
of both packages)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import isolated_env

SRC = Path(__file__).resolve().parents[1] / "src"
# what a package's __init__ binds for its own use: not public names
MACHINERY = {"annotations", "TYPE_CHECKING", "lazy_exports"}


def public_members(package: str, tmp_path: Path) -> list[str]:
    """The public members of `package` freshly imported in its own interpreter, its submodules
    aside (an imported submodule, such as poisson_prove.episode, is an attribute of its package)."""
    code = (
        f"import json, types, {package} as p\n"
        "subs = [n for n, v in vars(p).items()\n"
        "        if isinstance(v, types.ModuleType) and v.__name__ == f'{p.__name__}.{n}']\n"
        "print(json.dumps([n for n in dir(p) if n not in subs]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=isolated_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    names = json.loads(result.stdout)
    return sorted(n for n in names if (not n.startswith("_") or n == "__version__") and n not in MACHINERY)


def declared(init: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """From a package's __init__.py: name -> "module:attribute" of its TYPE_CHECKING imports and
    of its lazy map, and the names it binds itself (a constant, an eager import)."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    typed: dict[str, str] = {}
    lazy: dict[str, str] = {}
    own: list[str] = []
    constants: dict[str, object] = {}  # module-level names the map may be written with
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                for alias in statement.names:
                    name = alias.asname or alias.name
                    module = f"{statement.module}.{alias.name}"
                    path = SRC / module.replace(".", "/")
                    is_module = path.with_suffix(".py").exists() or (path / "__init__.py").exists()
                    typed[name] = module if is_module else f"{statement.module}:{alias.name}"
        elif isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "(__getattr__, __dir__)":
            # the map as written (literals, and comprehensions over literal names)
            lazy = eval(ast.unparse(node.value.args[1]), dict(constants))  # type: ignore[attr-defined]
        elif isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) != "__all__":
            name = ast.unparse(node.targets[0])
            if isinstance(node.value, ast.Constant):
                constants[name] = node.value.value
            if not name.startswith("_"):
                own.append(name)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            own.extend(a.asname or a.name for a in node.names if (a.asname or a.name) not in MACHINERY)
    return typed, lazy, own
