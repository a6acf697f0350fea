"""The import graph of a package, read from its source: module-level and function-level imports.

The layer tests use it to hold the architecture written in each package's docstring: imports
point down only, no circle between modules (counting imports inside functions, which cannot
hide one), and a function-level import only with its reason in a comment beside it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


@dataclass(frozen=True)
class Import:
    importer: str  # module doing the import, e.g. proveai.capture.session
    target: str  # the module imported (an internal module, or the top-level name of another)
    line: int
    function_level: bool  # inside a def: run when called, not at import
    internal: bool  # target is a module of the scanned packages
    reason: str | None  # the comment on the import's line or the line above, if any
    type_only: bool = False  # under `if TYPE_CHECKING:`: no run-time edge, but still a dependency


def _modules(packages: Sequence[str]) -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((SRC / package).rglob("*.py")):
            parts = list(path.relative_to(SRC).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join(parts)] = (path, is_package)
    return found


def _comment(lines: list[str], line: int) -> str | None:
    """A `#` comment on line `line` (1-based) or alone on the line above it."""
    here = lines[line - 1]
    if "#" in here:
        return here.split("#", 1)[1].strip() or None
    above = lines[line - 2].strip() if line >= 2 else ""
    return above[1:].strip() or None if above.startswith("#") else None


def imports(packages: Sequence[str]) -> list[Import]:
    """Every import statement in `packages`: at the top of a module, inside functions and under
    `if TYPE_CHECKING:` (marked `type_only`: a type the module needs is a dependency too, so a
    circle or an upward reach made only of annotations still counts)."""
    modules = _modules(packages)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    found: list[Import] = []
    for module, (path, is_package) in modules.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        base = module if is_package else module.rpartition(".")[0]

        def visit(node: ast.AST, in_function: bool, module: str = module, base: str = base,
                  lines: list[str] = lines, type_only: bool = False) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    for body in child.body:
                        visit(ast.Module(body=[body], type_ignores=[]), in_function, type_only=True)
                    for orelse in child.orelse:
                        visit(ast.Module(body=[orelse], type_ignores=[]), in_function, type_only=type_only)
                    continue
                nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                names: list[str] = []
                if isinstance(child, ast.Import):
                    names = [alias.name for alias in child.names]
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        prefix = base
                        for _ in range(child.level - 1):
                            prefix = prefix.rpartition(".")[0]
                        source = prefix + ("." + child.module if child.module else "")
                    else:
                        source = child.module or ""
                    names = [f"{source}.{alias.name}" for alias in child.names]
                for name in names:
                    target = resolve(name)
                    internal = target is not None
                    if target is None:
                        target = name.split(".")[0]
                    if target == module:
                        continue
                    found.append(Import(
                        module, target, child.lineno, in_function, internal,
                        _comment(lines, child.lineno) if in_function else None, type_only,
                    ))
                visit(child, nested, type_only=type_only)

        visit(ast.parse(text), False)
    return found


def cycles(edges: Iterable[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module (each is an import circle)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for edge in edges:
        if edge.internal:
            graph[edge.importer].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def connect(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def layer_of(module: str, layers: Sequence[Sequence[str]]) -> tuple[int, str] | None:
    """(layer number, the prefix that matched) for `module`: the longest matching prefix wins."""
    best: tuple[int, str] | None = None
    for number, members in enumerate(layers):
        for prefix in members:
            if (module == prefix or module.startswith(prefix + ".")) and (
                best is None or len(prefix) > len(best[1])
            ):
                best = (number, prefix)
    return best


def upward_imports(edges: Iterable[Import], layers: Sequence[Sequence[str]]) -> list[str]:
    """Imports that point up, or sideways between two members of one layer.

    `layers` is lowest first; each layer lists module prefixes (a package or a module).
    Imports inside one member (e.g. within proveai.snapshot) are the member's own business;
    a module no layer names is reported too, so a new package has to be placed.
    """
    problems: list[str] = []
    for edge in edges:
        if not edge.internal:
            continue
        source = layer_of(edge.importer, layers)
        target = layer_of(edge.target, layers)
        where = f"{edge.importer}:{edge.line} imports {edge.target}"
        if source is None or target is None:
            missing = edge.importer if source is None else edge.target
            problems.append(f"{where}: {missing} is in no layer")
            continue
        if source[1] == target[1]:
            continue
        if target[0] > source[0]:
            problems.append(f"{where}: up from layer {source[0]} ({source[1]}) to {target[0]}")
        elif target[0] == source[0]:
            problems.append(f"{where}: sideways within layer {source[0]}")
    return problems


def unexplained_function_imports(edges: Iterable[Import]) -> list[str]:
    """Function-level imports without a comment saying why they are not at the top."""
    return [
        f"{edge.importer}:{edge.line} imports {edge.target} inside a function without a reason"
        for edge in edges
        if edge.function_level and not edge.reason
    ]
