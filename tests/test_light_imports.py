"""The append path and `import lorebook` load no heavy or CLI-framework modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import clean_env, lore

HEAVY = {
    "torch",
    "sentence_transformers",
    "chromadb",
    "git",
    "textual",
    "mcp",
    "click",
    "pydantic",
    "ruamel",
    "yaml",
    "frontmatter",
    "gitdb",
    "opentelemetry",
    "google",
    "psycopg",
}  # `lore mirror postgres` only: never the hooks, the append path or a read

LOG_WRAPPER = """
import json, sys
import lorebook.cli
code = lorebook.cli.main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _top_level(modules: list[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def _run_log(root: Path, *args: str) -> tuple[int, str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", LOG_WRAPPER, "log", *args],
        capture_output=True,
        text=True,
        env=clean_env(root),
        timeout=60,
    )
    lines = done.stdout.strip().splitlines()
    report = json.loads(lines[-1])
    return report["code"], "\n".join(lines[:-1]), _top_level(report["modules"])


def test_lore_log_imports_nothing_heavy(store: Path) -> None:
    code, out, modules = _run_log(
        store, "commit", "--context", '{"files": ["a.py"]}', "--epic", "epic-1", "--duration", "1.5"
    )
    assert code == 0
    assert len(out.strip()) == 26  # the id was printed: the append really happened
    assert modules & HEAVY == set()
    assert "lorebook" in modules


def test_lore_log_json_and_error_paths_import_nothing_heavy(store: Path) -> None:
    code, out, modules = _run_log(
        store, "deploy", "--json", "--outcome", "failure", "--error", "token=ghp_" + "a" * 36
    )
    assert code == 0
    assert json.loads(out)["type"] == "deploy"
    assert modules & HEAVY == set()
    code, _, modules = _run_log(store, "deploy", "--outcome", "exploded")
    assert code == 1
    assert modules & HEAVY == set()


def test_first_log_after_cli_init_imports_no_yaml_library(tmp_path: Path) -> None:
    """`lore init` then `lore log` in a fresh directory: the config template is not parsed
    with ruamel on the append path."""
    root = tmp_path / "fresh"
    root.mkdir()
    assert lore("init", str(root)).code == 0
    code, _, modules = _run_log(root, "plan")
    assert code == 0
    assert modules & HEAVY == set()


def test_python_m_lorebook_log_importtime(store: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "lorebook",
            "log",
            "spawn",
            "--outcome",
            "in_progress",
        ],
        capture_output=True,
        text=True,
        env=clean_env(store),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    imported = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "lorebook.cli.logcore" in imported  # the fast path really ran
    assert _top_level(sorted(imported)) & HEAVY == set()


def test_import_lorebook_is_light() -> None:
    code = (
        "import json, sys\nimport lorebook\nfrom lorebook import Lorebook, Session\n"
        "assert Lorebook.__name__ == 'Lorebook'\nprint(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    modules = _top_level(json.loads(done.stdout))
    assert "lorebook" in modules
    assert modules & HEAVY == set()
