"""The package's layers only look down, and no import cycle joins its modules (``docs/architecture.md``, "Layers").

Every module's imports are read with :mod:`ast`: at module level, inside
functions (a lazy import is still a dependency) and under ``if TYPE_CHECKING:``
(a type is a dependency too). A module of a layer may import its own layer and
the layers below it, never one above; within a layer the folders may import one
another, but no chain of imports may come back to where it started. The only
cycles allowed are ``cli/``'s: its ``__init__`` loads the subcommands lazily and
they import the shared parser helpers back.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import langchain_memoryos

PACKAGE = "langchain_memoryos"
ROOT = Path(langchain_memoryos.__file__).parent
DOCS = ROOT.parent / "docs" / "architecture.md"

#: The layers, bottom first: each folder (or top-level module) of the package, by name; ``""`` is the
#: package's ``__init__`` (the public names, importing from everywhere). docs/architecture.md lists the same.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "threads", "background"),
    ("config",),
    ("schema",),
    ("scoring",),
    ("embeddings",),
    ("index",),
    ("kernel",),
    ("store",),
    ("retrieval",),
    ("controllers",),
    ("amu",),
    ("tiers",),
    ("pipeline",),
    ("operations",),
    ("backends",),
    ("facade", "memory", "graph"),
    ("integrations",),
    ("inspector",),
    ("evaluation",),
    ("cli",),
    ("",),
)

#: Cycles allowed: ``cli/__init__`` loads its subcommand modules on first use, and they import ``cli.common``.
CYCLE_EXEMPT = ("cli",)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str:
    """The module an import names (``a.b.c`` is module ``a.b`` when ``c`` is a name in it)."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str) -> Iterator[tuple[str, int]]:
    """Every package module ``module`` imports, with the line: module level, in functions, under TYPE_CHECKING."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    yield _resolve(alias.name), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            if name != PACKAGE and not name.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                yield _resolve(f"{name}.{alias.name}"), node.lineno


def _folder(module: str) -> str:
    """The top-level folder (or module) of the package a module lies in; ``""`` for the package itself."""
    return module.split(".")[1] if "." in module else ""


def _layer(module: str) -> int:
    folder = _folder(module)
    for i, layer in enumerate(LAYERS):
        if folder in layer:
            return i
    raise AssertionError(f"{module}: its folder {folder!r} is in no layer; add it to LAYERS and docs/architecture.md")


GRAPH = {module: sorted(set(_imports(module))) for module in MODULES}


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    edges = {m: sorted({t for t, _ in GRAPH[m] if t != m}) for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in MODULES:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                child = edges[node][i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_every_folder_has_a_layer() -> None:
    folders = {_folder(m) for m in MODULES}
    placed = {name for layer in LAYERS for name in layer}
    assert folders == placed, f"unplaced: {sorted(folders - placed)}; gone: {sorted(placed - folders)}"


def test_imports_only_look_down() -> None:
    upward = [
        f"{source}:{line} imports {target} ({_folder(target) or PACKAGE} is above {_folder(source) or PACKAGE})"
        for source, imports in GRAPH.items()
        for target, line in imports
        if _layer(target) > _layer(source)
    ]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_no_import_cycle() -> None:
    cycles = [c for c in _cycles() if not all(_folder(m) in CYCLE_EXEMPT for m in c)]
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_walk_sees_lazy_and_type_checking_imports() -> None:
    """The walk is not blind to the imports a runtime check would miss: one inside a function, one for types only."""
    lazy = {target for target, _ in GRAPH[f"{PACKAGE}.controllers"]}
    assert f"{PACKAGE}.controllers.llm" in lazy  # imported inside __getattr__ and under TYPE_CHECKING


def test_the_docs_list_the_layers_in_order() -> None:
    block = DOCS.read_text(encoding="utf-8").split("<!-- layers -->")[1]
    items = re.split(r"\n- ", "\n" + block.strip())[1:]
    listed = [tuple(re.findall(r"`(\w+)(?:/|\.py)`", item.split(":")[0])) for item in items]
    names = [tuple("__init__" if n == "" else n for n in layer) for layer in reversed(LAYERS)]
    assert listed == names, "docs/architecture.md's list of layers is not LAYERS (top first)"
