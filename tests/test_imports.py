"""No import cycle in flower/, benchmarks/ or tools/: their import graphs, read statically, have none.

In a cycle, which names a module sees depends on which module was imported first, and each module of it
can only be understood with the others. The graph is read from the source with `ast`: relative imports
are resolved, and every import counts: one inside a function (it still ties the modules together) and
one under `if TYPE_CHECKING:` (it never runs, but a reader, a type checker and a refactoring still need
both modules at once). `from package import name` is an edge to the submodule `package.name` when there
is one, else to the package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("flower", "benchmarks", "tools")


def modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Every module of `package` under `root`, by dotted name: its file, and whether it is a package."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import under `node`, at any depth (`if TYPE_CHECKING:` blocks included)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        else:
            yield from _import_nodes(child)


def imports(name: str, path: Path, is_package: bool, known: dict[str, tuple[Path, bool]]) -> set[str]:
    """The modules of `known` that module `name` imports."""
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        found.update(target for target in targets if target in known and target != name)
    return found


def graph(root: Path, package: str) -> dict[str, set[str]]:
    known = modules(root, package)
    return {name: imports(name, path, is_package, known) for name, (path, is_package) in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1 or node in edges[node]:
                found.append(_cycle_in(set(component), edges))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _cycle_in(component: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A path that starts and ends at the same module, inside one strongly connected component."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for other in sorted(edges[node] & component):
            if other == start:
                return [*paths[node], start]
            if other not in paths:
                paths[other] = [*paths[node], other]
                queue.append(other)
    raise AssertionError(f"no cycle through {start} in {sorted(component)}")


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package: str) -> None:
    edges = graph(ROOT, package)
    assert len(edges) > 3, f"found only {len(edges)} modules in {package}/: is the walk still right?"
    found = cycles(edges)
    assert not found, f"import cycles in {package}/:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_walk_finds_a_cycle_through_a_function_and_through_type_checking(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .b import B\n")
    (package / "a.py").write_text("def f():\n    from .sub import b\n")
    (package / "sub" / "b.py").write_text("from .. import a\nB = 1\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n"
    )
    (package / "d.py").write_text("from pkg.c import *\nD = 1\n")

    edges = graph(tmp_path, "pkg")

    assert edges["pkg.a"] == {"pkg.sub.b"} and edges["pkg.sub.b"] == {"pkg.a"}
    assert edges["pkg.c"] == {"pkg.d"} and edges["pkg.d"] == {"pkg.c"}
    assert cycles(edges) == [["pkg.a", "pkg.sub.b", "pkg.a"], ["pkg.c", "pkg.d", "pkg.c"]]
