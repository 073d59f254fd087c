"""The layers of tfnb: each package imports only the layers below it, and no chain of imports leads back.

Every module of tfnb/, kernels/ (installed as tfnb.kernels) and visualizer/ (installed as tfnb.visualizer) is
read with `ast`. Imports inside functions count: they run too, only later. Imports under `if TYPE_CHECKING:`
never run and are skipped; imports of other distributions (numpy, cupy, scipy) are not layers and are ignored.
"""

from __future__ import annotations

import ast
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"tfnb": ROOT / "tfnb", "tfnb.kernels": ROOT / "kernels", "tfnb.visualizer": ROOT / "visualizer"}

# The layers each layer may import besides itself. "api" is the TF1 API: the modules at the top of tfnb/ and
# the packages in API_PACKAGES. The visualizer reads tfnb through its public objects; nothing imports it.
BELOW_API = {"framework", "kernels", "ops", "autodiff", "runtime", "io", "input", "client", "distributed"}
MAY_IMPORT = {
    "framework": set(),
    "kernels": {"framework"},
    "ops": {"framework"},
    "autodiff": {"ops", "framework"},
    "runtime": {"framework", "kernels"},
    "io": {"framework", "ops"},
    "input": {"framework", "kernels", "ops", "io"},
    "client": {"runtime", "framework", "io"},
    "distributed": {"runtime", "client", "framework", "io", "kernels"},
    "api": BELOW_API,
    "visualizer": BELOW_API | {"api"},
}
API_PACKAGES = {"layers", "losses", "training", "contrib"}


@dataclass(frozen=True)
class Import:
    """One import statement's target, as a module of ours, and where it is."""

    importer: str
    target: str
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} imports {self.target}"


def find_modules() -> dict[str, Path]:
    """Every module's dotted name, as installed, and its file."""
    modules = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def layer_of(module: str, modules: dict[str, Path]) -> str | None:
    """The layer a module belongs to; None for a subpackage of tfnb that is neither a layer nor an API package."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in API_PACKAGES:
        return "api"
    if parts[1] in MAY_IMPORT:
        return parts[1]
    return "api" if modules[module].parent == SOURCES["tfnb"] else None


def is_type_checking(test: ast.expr) -> bool:
    """Whether an `if` tests typing's TYPE_CHECKING (False at run time)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_statements(node: ast.AST):
    """The import statements under `node`, in functions too, except in the body of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and is_type_checking(child.test):
            children = child.orelse
        else:
            children = [child]
        for statement in children:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                yield statement
            yield from import_statements(statement)


def known(name: str, modules: dict[str, Path]) -> str | None:
    """The module `name` is, or the package it is a name in (`from tfnb.ops import math_ops` or `... import add`)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules else None


def absolute_name(statement: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` statement imports from, with a relative one (`from . import x`) resolved."""
    if not statement.level:
        return statement.module
    parts = package.split(".")
    parent = parts[:len(parts) - statement.level + 1]
    return ".".join(parent + ([statement.module] if statement.module else []))


def imports_of(module: str, modules: dict[str, Path]) -> list[Import]:
    """The modules of ours that `module` imports."""
    path = modules[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for statement in import_statements(ast.parse(path.read_text(), str(path))):
        if isinstance(statement, ast.Import):
            names = [alias.name for alias in statement.names]
        else:
            names = [f"{absolute_name(statement, package)}.{alias.name}" for alias in statement.names]
        targets = {known(name, modules) for name in names} - {None, module}
        found += [Import(module, target, path, statement.lineno) for target in sorted(targets)]
    return found


def import_graph() -> tuple[dict[str, Path], list[Import]]:
    """All modules, and every import between them."""
    modules = find_modules()
    return modules, [found for module in modules for found in imports_of(module, modules)]


def test_every_subpackage_of_tfnb_is_a_layer_or_part_of_the_api():
    modules = find_modules()
    unknown = sorted(module for module in modules if layer_of(module, modules) is None)
    if unknown:
        pytest.fail(f"modules in no layer (add their package to MAY_IMPORT or API_PACKAGES): {unknown}", pytrace=False)


def test_each_layer_imports_only_the_layers_below_it():
    modules, imports = import_graph()
    violations = defaultdict(list)
    for found in imports:
        importer, target = layer_of(found.importer, modules), layer_of(found.target, modules)
        allowed = MAY_IMPORT.get(importer)  # None for a module in no layer: the test above names it
        if allowed is not None and target != importer and target not in allowed:
            violations[importer, target].append(found)
    report = [f"{importer} imports {target} (it may import {', '.join(sorted(MAY_IMPORT[importer])) or 'nothing'}):\n"
              + "\n".join(f"    {found}" for found in found_list)
              for (importer, target), found_list in sorted(violations.items())]
    if report:
        pytest.fail("imports that point up or across the layers:\n" + "\n".join(report), pytrace=False)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules that importing `start` imports, directly or not (`start` itself only through a cycle)."""
    seen, todo = set(), list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph[module]
    return seen


def shortest_cycle(graph: dict[str, set[str]], start: str) -> list[str]:
    """The shortest chain of imports from `start` back to itself (breadth first)."""
    previous, queue = {start: None}, deque([start])
    while queue:
        module = queue.popleft()
        for target in sorted(graph[module]):
            if target == start:
                chain = [module]
                while previous[chain[-1]] is not None:
                    chain.append(previous[chain[-1]])
                return [*reversed(chain), start]
            if target not in previous:
                previous[target] = module
                queue.append(target)
    raise ValueError(f"{start} is in no cycle")


def test_no_import_cycles():
    modules, imports = import_graph()
    graph = {module: set() for module in modules}
    for found in imports:
        graph[found.importer].add(found.target)
    reach = {module: reachable(graph, module) for module in graph}
    cycles = {frozenset(other for other in reach[module] if module in reach[other]) for module in graph
              if module in reach[module]}
    report = []
    for cycle in sorted(cycles, key=lambda modules_in_it: (-len(modules_in_it), min(modules_in_it))):
        report.append(f"{len(cycle)} modules import each other: {', '.join(sorted(cycle))}\n"
                      f"    for example {' -> '.join(shortest_cycle(graph, min(cycle)))}")
    if report:
        pytest.fail("import cycles:\n" + "\n".join(report), pytrace=False)
