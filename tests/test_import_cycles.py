"""No module import cycle inside a first-party package, read from the source (ast): each module's imports, at the
top or inside a function (a lazy import only hides a cycle until the function runs), resolved to the deepest module
they name. A package's __init__ re-exporting its modules is no cycle: importing `a.b` is an edge to `a.b`, not to
`a`."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["service", "conformance", "mock_backend", "serving", "commandline"]


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of `package` under `root`, by dotted name (a package by its own name, for its __init__)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement names: `from a import b` names `a.b` (a module, or a name in `a`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:  # relative: from the module's package, up level - 1 more
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    return [f"{base}.{alias.name}" for alias in node.names]


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of `package` with the modules of the same package it imports."""
    modules = _modules(root, package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _imported(node, name, path.name == "__init__.py"):
                while target and target not in modules:  # a name inside a module: the module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's), each sorted: every import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for neighbour in sorted(graph[node]):
            if neighbour not in index:
                visit(neighbour)
                low[node] = min(low[node], low[neighbour])
            elif neighbour in on_stack:
                low[node] = min(low[node], index[neighbour])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_import_cycle_inside_the_package(package):
    assert cycles(import_graph(ROOT, package)) == []


def test_a_cycle_is_found_however_it_is_hidden(tmp_path):
    """The check on a probe package: a lazy import, a relative one and a `from package import module` all count."""
    probe = tmp_path / "probe"
    (probe / "inner").mkdir(parents=True)
    (probe / "__init__.py").write_text("")
    (probe / "a.py").write_text("def f():\n    from probe.b import g\n")
    (probe / "b.py").write_text("from .inner import c\ng = 1\n")
    (probe / "inner" / "__init__.py").write_text("")
    (probe / "inner" / "c.py").write_text("from probe import a\n")
    (probe / "d.py").write_text("import probe.a\n")  # imports into the cycle, is not in it
    assert cycles(import_graph(tmp_path, "probe")) == [["probe.a", "probe.b", "probe.inner.c"]]

