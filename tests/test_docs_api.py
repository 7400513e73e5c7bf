"""docs/api.md lists every public method and property of the API objects, and the README's
Python example runs as written."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, lore
from lorebook.book import Lorebook, Session
from lorebook.expertise.api import Expertise
from lorebook.index import SearchIndex
from lorebook.knowledge.api import Learnings
from lorebook.knowledge.ops import KnowledgeOps
from lorebook.log.actionlog import ActionLog
from lorebook.log.catalog_query import CatalogView

ROOT = Path(__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "api.md"
# the facade and the objects its properties return (what the `lore` commands use)
DOCUMENTED = (
    Lorebook,
    Session,
    Learnings,
    KnowledgeOps,
    Expertise,
    SearchIndex,
    ActionLog,
    CatalogView,
)


def public_members(cls: type) -> list[str]:
    """Every public method, property and class attribute of `cls` (inherited ones too)."""
    return sorted(name for name, _ in inspect.getmembers(cls) if not name.startswith("_"))


@pytest.mark.parametrize("cls", DOCUMENTED, ids=lambda c: c.__name__)
def test_every_public_member_is_in_the_api_doc(cls: type) -> None:
    text = API_DOC.read_text(encoding="utf-8")
    missing = [
        f"{cls.__name__}.{name}"
        for name in public_members(cls)
        if f"`{cls.__name__}.{name}" not in text
    ]
    assert missing == [], f"add to docs/api.md (one line and an example each): {missing}"


def test_every_documented_entry_has_an_example() -> None:
    text = API_DOC.read_text(encoding="utf-8")
    classes = text[text.index("\n## Lorebook") :]  # the package section lists names only
    entries = re.split(r"\n- (?=`)", classes)[1:]
    assert len(entries) > 60
    assert [e.split("`")[1] for e in entries if "Example" not in e] == []


def test_the_check_catches_an_undocumented_method() -> None:
    class Lorebook:  # a stand-in with one method the page does not have
        def frobnicate(self) -> None: ...

    assert public_members(Lorebook) == ["frobnicate"]
    assert "`Lorebook.frobnicate" not in API_DOC.read_text(encoding="utf-8")


def readme_python() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_readme_python_example_runs(repo: Path) -> None:
    assert lore("init", str(repo), env=clean_env()).code == 0
    done = subprocess.run(
        [sys.executable, "-c", readme_python()],
        cwd=repo,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "deploying the api service" in done.stdout
    book = Lorebook.open(repo, env={})
    kinds = [(a["type"], a["outcome"]) for a in book.actions(limit=None)]
    assert ("deploy", "success") in kinds and ("deploy", "in_progress") in kinds
    assert ("plan", "success") in kinds


def test_the_readme_names_every_runtime_dependency() -> None:
    """README's Development section lists what pyproject.toml installs, no more, no less."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {re.split(r"[<>=!~\[ ;]", dep, maxsplit=1)[0] for dep in project["dependencies"]}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("Runtime dependencies", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`([A-Za-z0-9_.-]+)`", section)) - {"pyproject.toml"}
    assert named == wanted
