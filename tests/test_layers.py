"""The layer contract of `src/lorebook` (docs/architecture.md), checked over the source.

Every import counts: module level, inside functions and under `TYPE_CHECKING` (a type-only
import still ties two modules together: one cannot be read, moved or tested without the other).
A module may import its own package and the layers below it; the packages of an *independent*
layer (the siblings) may not import each other except through an edge written down below with
its reason; and no set of modules may import each other in a circle. The core layer (what the
cold paths load, held to the standard library) has its own rules in tests/test_core_layer.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "lorebook"

# Lowest first: (name, top-level packages/modules of lorebook, independent siblings?).
# "__init__" is `import lorebook` (the facade's entry); "launch" is the `lore` executable and
# "__main__" `python -m lorebook`: above every skin, each command goes to the skin serving it.
LAYERS: list[tuple[str, set[str], bool]] = [
    (
        "primitives",
        {
            "model",
            "ids",
            "timeutil",
            "paths",
            "store",
            "errors",
            "problems",
            "cmdline",
            "config",
            "config_check",
            "settings",
            "tuples",
            "framing",
            "child",
            "repoid",
            "contracts",
            "collector",
        },
        False,
    ),
    ("redaction and git", {"redact", "git"}, True),
    ("signals", {"events", "notices", "progress"}, False),
    ("log", {"log"}, False),
    ("domains", {"knowledge", "expertise", "index"}, True),
    ("org scale", {"mirror", "otel"}, False),
    ("facade", {"book", "init", "__init__"}, False),
    ("render", {"render"}, False),
    ("applications", {"demo", "demo_story"}, False),
    ("skins", {"cli", "mcp", "hooks", "tui"}, True),
    ("launcher", {"launch", "__main__", "docgen"}, False),
]

# Allowed imports between independent siblings (importer unit, imported unit): why.
ALLOWED: dict[tuple[str, str], str] = {
    ("index", "knowledge"): "the index reads learning files with the knowledge front-matter "
    "reader and section splitter (knowledge.fileformat, knowledge.sections): one parser",
}

# Module edges that break the contract and are being removed, each with its reason (none today:
# a new one needs a reason and an issue). Each must still exist: delete an entry when its edge goes.
PENDING: dict[tuple[str, str], str] = {}


# -- the checker -----------------------------------------------------------------------------------
def module_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, in any way."""
    name = package_dir.name
    modules: dict[str, Path] = {}
    for path in package_dir.rglob("*.py"):
        parts = [name, *path.relative_to(package_dir).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        here = module.split(".") if is_package else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                names = [target, *(f"{target}.{alias.name}" for alias in node.names)]
            else:
                continue
            for imported in names:
                while imported and imported not in modules:  # `import a.b.c` loads a.b.c
                    imported = imported.rpartition(".")[0]
                if imported and imported != module:
                    graph[module].add(imported)
    return graph


def unit(module: str) -> str:
    """`lorebook.log.append` -> `log`; the package itself -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(layers: list[tuple[str, set[str], bool]]) -> dict[str, int]:
    return {name: level for level, (_, units, _) in enumerate(layers) for name in units}


def violations(
    graph: dict[str, set[str]],
    layers: list[tuple[str, set[str], bool]],
    allowed: dict[tuple[str, str], str],
) -> list[str]:
    """Every import that goes up a layer, or across independent siblings without an allowed
    edge; a module in no layer is one too."""
    level = layer_of(layers)
    found = []
    for module in sorted(graph):
        if unit(module) not in level:
            found.append(f"{module}: in no layer (add it to LAYERS and docs/architecture.md)")
            continue
        for imported in sorted(graph[module]):
            a, b = unit(module), unit(imported)
            if a == b:
                continue
            if b not in level:
                found.append(f"{module} imports {imported}: which is in no layer")
                continue
            la, lb = level[a], level[b]
            name = layers[la][0]
            if lb > la:
                found.append(f"{module} imports {imported}: up from {name} to {layers[lb][0]}")
            elif lb == la and layers[la][2] and (a, b) not in allowed:
                found.append(f"{module} imports {imported}: siblings in {name}")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def without(graph: dict[str, set[str]], edges: dict[tuple[str, str], str]) -> dict[str, set[str]]:
    return {m: {i for i in imported if (m, i) not in edges} for m, imported in graph.items()}


# -- lorebook ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return module_graph(SRC)


def test_imports_follow_the_layers(graph: dict[str, set[str]]) -> None:
    assert violations(without(graph, PENDING), LAYERS, ALLOWED) == []


def test_no_import_circles(graph: dict[str, set[str]]) -> None:
    assert cycles(without(graph, PENDING)) == []


def test_every_exception_is_still_needed(graph: dict[str, set[str]]) -> None:
    """An allowed or pending edge that no longer exists is deleted, not kept as a loophole."""
    units = {(unit(m), unit(i)) for m, imported in graph.items() for i in imported}
    assert [edge for edge in ALLOWED if edge not in units] == []
    assert [edge for edge in PENDING if edge[1] not in graph.get(edge[0], ())] == []


def test_the_layers_are_written_down() -> None:
    """docs/architecture.md names every layer and every allowed sibling edge."""
    text = (SRC.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for _, units, _ in LAYERS:
        for name in units - {"__init__", "__main__", "mcp", "hooks", "tui"}:
            assert f"`{name}`" in text, name
    for a, b in ALLOWED:
        if a != "__main__":
            assert f"`{a}` → `{b}`" in text, (a, b)


# -- the checker itself, on a planted package --------------------------------------------------
PLANTED_LAYERS: list[tuple[str, set[str], bool]] = [
    ("base", {"base"}, False),
    ("middle", {"left", "right"}, True),
    ("top", {"top", "__init__"}, False),
]


def _plant(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


CLEAN = {
    "__init__.py": "from .top import api\n",
    "base/__init__.py": "",
    "base/util.py": "import os\n",
    "left/__init__.py": "",
    "left/a.py": "from ..base import util\n",
    "right/__init__.py": "",
    "right/b.py": "from pkg.base.util import os\n",
    "top/__init__.py": "",
    "top/api.py": "from ..left import a\nfrom ..right import b\n",
}


def test_checker_passes_a_clean_package(tmp_path: Path) -> None:
    graph = module_graph(_plant(tmp_path, CLEAN))
    assert graph["pkg.top.api"] == {"pkg.left", "pkg.left.a", "pkg.right", "pkg.right.b"}
    assert graph["pkg.right.b"] == {"pkg.base.util"}
    assert violations(graph, PLANTED_LAYERS, {}) == []
    assert cycles(graph) == []


def test_checker_fails_on_an_upward_import_even_under_type_checking(tmp_path: Path) -> None:
    planted = {
        **CLEAN,
        "base/util.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..top.api import a\n"
        ),
    }
    graph = module_graph(_plant(tmp_path, planted))
    assert violations(graph, PLANTED_LAYERS, {}) == [
        "pkg.base.util imports pkg.top.api: up from base to top"
    ]
    assert cycles(graph) == [["pkg.base.util", "pkg.left.a", "pkg.right.b", "pkg.top.api"]]


def test_checker_fails_on_siblings_unless_the_edge_is_allowed(tmp_path: Path) -> None:
    planted = {**CLEAN, "left/a.py": "def f():\n    import pkg.right.b\n"}
    graph = module_graph(_plant(tmp_path, planted))
    assert violations(graph, PLANTED_LAYERS, {}) == [
        "pkg.left.a imports pkg.right.b: siblings in middle"
    ]
    assert violations(graph, PLANTED_LAYERS, {("left", "right"): "a reason"}) == []


def test_checker_finds_a_function_level_circle_inside_one_package(tmp_path: Path) -> None:
    planted = {
        **CLEAN,
        "base/one.py": "def f():\n    from . import two\n",
        "base/two.py": "from .one import f\n",
    }
    graph = module_graph(_plant(tmp_path, planted))
    assert violations(graph, PLANTED_LAYERS, {}) == []  # same package: the layers allow it
    assert cycles(graph) == [["pkg.base.one", "pkg.base.two"]]


def test_checker_places_every_module(tmp_path: Path) -> None:
    graph = module_graph(_plant(tmp_path, {**CLEAN, "extra.py": ""}))
    assert violations(graph, PLANTED_LAYERS, {}) == [
        "pkg.extra: in no layer (add it to LAYERS and docs/architecture.md)"
    ]
