"""The layout, drawn from the code: data flows one way through the layers, no module imports
itself in a circle, no private name crosses a module, and modules and classes stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ddx"
# lowest first; a module may import its own layer and the ones before it
LAYERS = ["base", "ops", "lang", "graph", "engine", "replay", "out", "app"]
BASE = {"errors", "limits", "fmt", "textsafe", "gcpause"}
ENTRY = {"ddx", "ddx.__main__"}  # the package root and `python -m ddx`: the whole app

# Modules and classes over the size we want, with the size they may not grow past: the list
# of what is still to split (ARCHITECTURE.md). A module that shrinks below the limit, or a
# new one past it, makes this test fail until the list says so.
MAX_MODULE, MAX_CLASS = 400, 250
OVERSIZED_MODULES: dict[str, int] = {
}
OVERSIZED_CLASSES: dict[str, int] = {
}


def modules() -> dict[str, ast.Module]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return found


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 2 and parts[1] in BASE:
        return 0
    return LAYERS.index(parts[1])


def imports(name: str, path: Path, tree: ast.Module, known: set[str]) -> list[tuple[str, str]]:
    """(module imported, name imported or '') for every import, at any depth of the file."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ddx"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub, "") if sub in known else (target, alias.name))
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.startswith("ddx")]
    return found


MODULES = modules()
GRAPH = {name: imports(name, path, tree, set(MODULES)) for name, (path, tree) in MODULES.items()}


def test_every_module_is_in_a_layer():
    for name in MODULES:
        if name not in ENTRY and not name.endswith("__init__"):
            assert 0 <= layer(name) < len(LAYERS), name


@pytest.mark.parametrize("name", sorted(set(MODULES) - ENTRY))
def test_no_module_imports_a_higher_layer(name):
    for target, _ in GRAPH[name]:
        if target in ENTRY:
            assert _ == "__version__", f"{name} imports the package root's {_}"
            continue
        assert layer(target) <= layer(name), f"{name} ({LAYERS[layer(name)]}) imports " \
                                             f"{target} ({LAYERS[layer(target)]})"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_crosses_a_module(name):
    for target, imported in GRAPH[name]:
        if target != name and imported.startswith("_") and imported != "__version__":
            pytest.fail(f"{name} imports {target}.{imported}")


def test_no_import_circle():
    """Tarjan's strongly connected components, with an explicit stack."""
    edges = {n: sorted({t for t, _ in GRAPH[n] if t in MODULES and t != n}) for n in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, circles = set(), [], []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                part = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    part.append(m)
                    if m == node:
                        break
                if len(part) > 1:
                    circles.append(sorted(part))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    circles = [c for c in circles if not set(c) & ENTRY]
    assert not circles, circles


def test_modules_and_classes_stay_small():
    big_modules, big_classes = {}, {}
    for name, (path, tree) in MODULES.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE:
            big_modules[name] = lines
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS:
                    big_classes[f"{name}.{node.name}"] = size
    assert set(big_modules) == set(OVERSIZED_MODULES), big_modules
    assert set(big_classes) == set(OVERSIZED_CLASSES), big_classes
    for name, size in big_modules.items():
        assert size <= OVERSIZED_MODULES[name], f"{name} grew to {size} lines"
    for name, size in big_classes.items():
        assert size <= OVERSIZED_CLASSES[name], f"{name} grew to {size} lines"
