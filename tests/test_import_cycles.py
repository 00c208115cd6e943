"""No import cycle inside the package: a module that imports another which imports it back, directly or
around a loop, works only in one import order and hides which of the two is the base.

The graph is built from the source with `ast`: an edge for every `import a.b` and `from a import b` (absolute
or relative) that names a module of the package, to the module itself (`from a import b` names module `a.b`
when `a/b.py` exists, else `a`), wherever the statement is: at module level, in a class, or in a function
(a function-level import is a cycle deferred, not removed). Left out:

- imports under `if TYPE_CHECKING:`: they never run;
- the implicit edge from a module to its parent packages (importing `a.b.c` runs `a/__init__.py`): a
  package's `__init__` importing its own submodules would otherwise always be a cycle;
- names resolved at run time (`importlib.import_module`: the package's lazy attributes, a cloud's parts).

No import of an optional SDK needs an exception: the SDKs are outside the package, so their lazy imports
are no edges here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import elastic_gpu

PACKAGE_DIR = Path(elastic_gpu.__file__).parent

#: Cycles accepted for now, each as the set of its modules (none: the test fails while an entry is stale).
KNOWN_CYCLES: set[frozenset[str]] = set()

Edge = tuple[str, str, int]  # (importer, imported, line)


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package in `package_dir`."""
    out: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in modules]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    out = []
    for alias in node.names:
        if f"{base}.{alias.name}" in modules:
            out.append(f"{base}.{alias.name}")
        elif base in modules:
            out.append(base)
    return out


def import_edges(modules: dict[str, Path]) -> list[Edge]:
    """Every import of a module of the package by one of them that runs (see the module docstring)."""
    edges: list[Edge] = []
    for module, path in modules.items():

        def visit(node: ast.AST, module: str = module, path: Path = path) -> None:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                for child in node.orelse:
                    visit(child)
                return
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges.extend((module, target, node.lineno) for target in _imported(module, path, node, modules))
            for child in ast.iter_child_nodes(node):
                visit(child)

        visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return edges


def cycles(edges: list[Edge]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), and modules that import
    themselves: each holds at least one cycle."""
    graph: dict[str, set[str]] = {}
    for source, target, _ in edges:
        graph.setdefault(source, set()).add(target)
        graph.setdefault(target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def _described(component: frozenset[str], edges: list[Edge], modules: dict[str, Path]) -> str:
    inside = sorted({(s, t, line) for s, t, line in edges if s in component and t in component})
    return "; ".join(f"{modules[s].relative_to(PACKAGE_DIR.parent)}:{line} imports {t}" for s, t, line in inside)


def test_the_package_has_no_import_cycle() -> None:
    modules = module_files(PACKAGE_DIR)
    edges = import_edges(modules)
    found = set(cycles(edges))
    new = [_described(c, edges, modules) for c in sorted(found - KNOWN_CYCLES, key=sorted)]
    assert not new, "import cycles (move what both sides need to a module of its own):\n" + "\n".join(new)
    gone = [sorted(c) for c in KNOWN_CYCLES - found]
    assert not gone, f"known cycles that are gone: remove them from KNOWN_CYCLES: {gone}"


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    """The check itself: a cycle closed by an import inside a function counts, one under TYPE_CHECKING does
    not, and neither does a package's own `__init__` importing its submodule."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg import a\n")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import a\n    return a\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import d\nimport pkg.sub.b\n"
    )
    (package / "d.py").write_text("import pkg.c\n")
    modules = module_files(package)
    assert cycles(import_edges(modules)) == [frozenset({"pkg.a", "pkg.sub.b"})]
