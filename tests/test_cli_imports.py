"""Every skin (the CLI, the MCP server, the hooks, the TUI) imports `lorebook` (the facade and its
public names), `lorebook.render`, `lorebook.contracts` (the types of the JSON it prints),
`lorebook.cmdline` (the declaration of its commands and their one parser) and its own modules --
nothing else of the package (`lore demo` gets `run_demo` from the package too): at module level,
inside functions and under TYPE_CHECKING alike."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "lorebook"
CLI = PACKAGE / "cli"
ALLOWED = ("lorebook.render", "lorebook.contracts", "lorebook.cmdline", "lorebook.cli")
SKINS = {  # skin -> what it may import besides `lorebook` itself
    "cli": ALLOWED,
    "mcp": ("lorebook.render", "lorebook.contracts", "lorebook.cmdline", "lorebook.mcp"),
    "hooks": ("lorebook.render", "lorebook.contracts", "lorebook.cmdline", "lorebook.hooks"),
    "tui": ("lorebook.render", "lorebook.contracts", "lorebook.cmdline", "lorebook.tui"),
}
SUBMODULES = {
    p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
}


def _allowed(module: str, allowed: tuple[str, ...] = ALLOWED) -> bool:
    return module == "lorebook" or any(
        module == prefix or module.startswith(prefix + ".") for prefix in allowed
    )


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def forbidden_imports(
    source: str, module: str, *, is_package: bool = False, allowed: tuple[str, ...] = ALLOWED
) -> list[str]:
    """Every `lorebook.` module `source` (the text of `module`) imports that a skin may not."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    bad = []
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            targets = [target]
            if target == "lorebook":  # `from lorebook import book` imports a submodule
                targets += [f"lorebook.{a.name}" for a in node.names if a.name in SUBMODULES]
        elif isinstance(node, ast.Call) and node.args:  # importlib.import_module("lorebook.x")
            first = node.args[0]
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("import_module", "__import__"):
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    targets = [first.value]
                elif isinstance(first, ast.JoinedStr) and first.values:
                    head = first.values[0]
                    if isinstance(head, ast.Constant) and isinstance(head.value, str):
                        targets = [head.value.rstrip(".")]
        for target in targets:
            if (target == "lorebook" or target.startswith("lorebook.")) and not _allowed(
                target, allowed
            ):
                bad.append(f"{module}:{node.lineno}: imports {target}")
    return bad


def test_the_cli_imports_only_the_facade_and_render() -> None:
    files = sorted(CLI.rglob("*.py"))
    assert len(files) > 20  # every command module was looked at
    bad = []
    for path in files:
        bad += forbidden_imports(
            path.read_text(encoding="utf-8"),
            _module_name(path),
            is_package=path.name == "__init__.py",
        )
    assert bad == []


@pytest.mark.parametrize("skin", ["mcp", "hooks", "tui"])
def test_every_other_skin_imports_only_the_facade_and_render(skin: str) -> None:
    files = sorted((PACKAGE / skin).rglob("*.py"))
    if skin != "tui":
        assert len(files) > 2  # the skin is there and was looked at
    bad = []
    for path in files:
        bad += forbidden_imports(
            path.read_text(encoding="utf-8"),
            _module_name(path),
            is_package=path.name == "__init__.py",
            allowed=SKINS[skin],
        )
    assert bad == []


@pytest.mark.parametrize(
    "source",
    [
        "from ...book import Lorebook",
        "from ...log.retention import archive_shards",
        "def f():\n    from ...index.watch import Watcher\n",
        "if TYPE_CHECKING:\n    from ...knowledge.drafting import DraftOutcome\n",
        "import lorebook.log.report",
        "from lorebook.timeutil import utcnow",
        "from ... import book",
        "import importlib\nimportlib.import_module('lorebook.index.watch')\n",
        "from ...demo_story import play",
        "from ...demo import run_demo",
    ],
)
def test_the_check_catches_each_way_around_the_facade(source: str) -> None:
    assert forbidden_imports(source, "lorebook.cli.commands.x_cmd")


@pytest.mark.parametrize(
    "source",
    [
        "from ... import Lorebook, UsageError",
        "from ...render.stats import stats_table",
        "from ...render import learnings as render",
        "from ... import run_demo",
        "from ..output import to_json",
        "from ..longwork import run_with_book",
        "import lorebook",
        "import argparse",
        "import importlib\nimportlib.import_module(f'lorebook.cli.commands.{name}')\n",
    ],
)
def test_the_check_lets_the_skin_imports_through(source: str) -> None:
    assert forbidden_imports(source, "lorebook.cli.commands.x_cmd") == []


def test_the_fast_path_reaches_the_appender_through_the_package() -> None:
    source = (CLI / "logcore.py").read_text(encoding="utf-8")
    assert forbidden_imports(source, "lorebook.cli.logcore") == []
    assert "open_appender" in source


def _imports_of(path: Path) -> set[str]:
    module = _module_name(path)
    package = module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize("name", ["report", "export"])
def test_reports_and_exports_are_given_the_log_not_the_facade(name: str) -> None:
    """Not even under TYPE_CHECKING: they receive the `ActionLog`."""
    imported = _imports_of(PACKAGE / "log" / f"{name}.py")
    assert "lorebook.log.actionlog.ActionLog" in imported
    assert not {m for m in imported if m == "lorebook.book" or m.startswith("lorebook.book.")}
