"""The map of the house in docs/README.md, written from the code's own docstrings.

Each package's `__init__.py` docstring lists its layers, lowest first, as numbered lines
(`3. chaos: HTTP faults injected into an episode's calls`); each folder's own `__init__.py`
docstring (or a module's) opens with one line saying what it holds. This script turns both
into the tables between the `<!-- map:PACKAGE -->` and `<!-- /map -->` markers of
docs/README.md, so the page cannot drift from the code: tests/docs/test_docs_map.py fails when
the page differs from what this script writes.

    python scripts/docs_map.py          # print the tables
    python scripts/docs_map.py --write  # rewrite them in docs/README.md
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
README = ROOT / "docs" / "README.md"
PACKAGES = ("prove_common", "poisson_prove", "proveai")
_LAYER = re.compile(r"^(\d+)\. (.+?)(?::\s+(.*))?$")


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def layers(package: str) -> list[tuple[int, list[str], str]]:
    """The numbered layer lines of a package's docstring: (number, names, what the line says)."""
    found: list[tuple[int, list[str], str]] = []
    for line in _docstring(SRC / package / "__init__.py").splitlines():
        match = _LAYER.match(line)
        if match:
            names = [name.strip() for name in match.group(2).split(",")]
            found.append((int(match.group(1)), names, (match.group(3) or "").strip()))
        elif found and line.startswith("   ") and line.strip():
            number, names, text = found[-1]
            found[-1] = (number, names, f"{text} {line.strip()}".strip())
    return found


def _where(package: str, name: str) -> tuple[str, Path]:
    folder = SRC / package / name.replace(".", "/")
    if (folder / "__init__.py").exists():
        return f"`{name}/`", folder / "__init__.py"
    return f"`{name}.py`", folder.with_suffix(".py")


def _summary(path: Path) -> str:
    """The first sentence (up to the first blank line) of a module's docstring, on one line."""
    first = _docstring(path).split("\n\n", 1)[0]
    return " ".join(first.split())


def package_table(package: str) -> str:
    rows = ["| layer | folder or module | what it holds |", "| --- | --- | --- |"]
    for number, names, _ in layers(package):
        for name in names:
            where, path = _where(package, name)
            text = _summary(path) if path.exists() else ""
            rows.append(f"| {number} | {where} | {text.replace('|', '/')} |")
    return "\n".join(rows)


def kit_table() -> str:
    rows = ["| module | what it holds |", "| --- | --- |"]
    for path in sorted((SRC / "prove_common").glob("*.py")):
        if path.name != "__init__.py":
            rows.append(f"| `{path.stem}.py` | {_summary(path).replace('|', '/')} |")
    return "\n".join(rows)


def tables() -> dict[str, str]:
    return {"prove_common": kit_table(), "poisson_prove": package_table("poisson_prove"),
            "proveai": package_table("proveai")}


def rewritten(text: str) -> str:
    """`text` (the README) with each marked map replaced by the table the code gives."""
    for package, table in tables().items():
        pattern = re.compile(rf"(<!-- map:{package} -->\n)(.*?)(<!-- /map -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"docs/README.md has no <!-- map:{package} --> ... <!-- /map --> section")
        text = pattern.sub(lambda m, table=table: m.group(1) + table + "\n" + m.group(3), text)
    return text


def main(argv: list[str]) -> int:
    if "--write" in argv:
        README.write_text(rewritten(README.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    for package, table in tables().items():
        print(f"{package}\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
