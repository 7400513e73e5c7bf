"""Paths a caller supplies stay where they belong: MCP `export_training_data` (a real `lore mcp`
over stdio), `lore export -o` and the `paths.*` settings of a committed config.

A path is refused in one line when it is absolute (over MCP), leads out of its folder with
`..`, or goes through a symlink planted in the store; nothing is written outside, and a good
relative path still works.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from conftest import assert_one_error_line, cli_run, git, lore
from lorebook import Lorebook

SRC = Path(__file__).resolve().parents[1] / "src"


class Client:
    """One running `lore mcp` and its stdio client, called from sync tests through a portal."""

    def __init__(self, portal: BlockingPortal, client: Any, root: Path) -> None:
        self.portal, self.client, self.root = portal, client, root

    def call(self, name: str, args: dict[str, Any]) -> Any:
        return self.portal.call(self.client.call_tool, name, args)

    def error(self, name: str, args: dict[str, Any]) -> str:
        result = self.call(name, args)
        assert result.is_error, result.structured_content
        text = str(result.content[0].text)
        assert "\n" not in text.strip(), text
        return text


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    from mcp import Client as McpClient
    from mcp import StdioServerParameters

    base = tmp_path_factory.mktemp("paths")
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert lore("init", cwd=root).code == 0
    book = Lorebook.open(root, env={})
    book.start_session(agent="PS", project="proj").log("commit", context={"files": ["a.py"]})
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LORE_MODEL_CACHE") if k in os.environ}
    env.update(PYTHONPATH=str(SRC), LORE_ROOT=str(root), LORE_PROJECT="proj", LORE_AGENT="PS")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebook", "mcp"], env=env, cwd=str(root)
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(McpClient(params)) as client,
    ):
        yield Client(portal, client, root)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (the repository and whatever lies beside it) and its bytes; not
    the action log nor lorebook's own cache, which the server writes in the background (the
    catalog and index builds)."""
    return {
        str(p): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file()
        and ".git" not in p.relative_to(root).parts[:1]
        and "actionlog" not in p.parts
        and not ("cache" in p.parts and ".lore" in p.parts)
    }


def test_a_relative_path_goes_under_the_export_folder(mcp: Client) -> None:
    result = mcp.call("export_training_data", {"path": "runs/train.jsonl"})
    assert not result.is_error, result.content
    manifest = result.structured_content
    assert manifest["path"] == "docs/training-data/runs/train.jsonl"
    written = mcp.root / manifest["path"]
    assert len(written.read_text().splitlines()) == manifest["record_count"] > 0


@pytest.mark.parametrize(
    "path",
    [
        "{outside}/stolen.jsonl",  # absolute, outside the repository
        "{root}/.git/config",  # absolute, inside it
        "../../../.git/config",
        "learnings/../../../../x",
        "../../.lore/config.yaml",
        "../../.claude/settings.json",
        "../../.git/hooks/pre-commit",
    ],
)
def test_absolute_and_traversal_paths_are_refused(mcp: Client, path: str) -> None:
    outside = mcp.root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (mcp.root / ".claude").mkdir(exist_ok=True)
    (mcp.root / ".claude" / "settings.json").write_text("{}\n")
    before = snapshot(mcp.root.parent)
    message = mcp.error(
        "export_training_data", {"path": path.format(outside=outside, root=mcp.root)}
    )
    assert "export path" in message
    assert snapshot(mcp.root.parent) == before  # nothing written, nothing replaced
    assert not (mcp.root.parent / "x").exists() and not (outside / "stolen.jsonl").exists()


def test_a_symlink_planted_in_the_export_folder_is_refused(mcp: Client) -> None:
    outside = mcp.root.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    target = outside / "victim.txt"
    target.write_text("keep me\n")
    folder = mcp.root / "docs" / "training-data"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "link.jsonl").symlink_to(target)  # the file itself
    (folder / "linkdir").symlink_to(outside, target_is_directory=True)  # a folder on the way
    try:
        before = snapshot(mcp.root.parent)
        assert "symlink" in mcp.error("export_training_data", {"path": "link.jsonl"})
        assert "symlink" in mcp.error("export_training_data", {"path": "linkdir/new.jsonl"})
        assert snapshot(mcp.root.parent) == before
        assert target.read_text() == "keep me\n" and sorted(os.listdir(outside)) == ["victim.txt"]
    finally:
        (folder / "link.jsonl").unlink()
        (folder / "linkdir").unlink()


@pytest.fixture
def logged(store: Path) -> Path:
    Lorebook.open(store, env={}).start_session(agent="PS").log("commit")
    return store


def test_cli_output_inside_the_repository_must_be_in_the_export_folder(logged: Path) -> None:
    config = logged / ".lore" / "config.yaml"
    before = config.read_bytes()
    result = cli_run(["--root", str(logged), "export", "-o", str(config)])
    assert_one_error_line(result, "export path", "must name a file inside docs/training-data")
    assert config.read_bytes() == before
    hook = logged / ".git" / "hooks" / "pre-commit"
    assert_one_error_line(cli_run(["--root", str(logged), "export", "-o", str(hook)]))
    assert not hook.exists()
    good = logged / "docs" / "training-data" / "mine.jsonl"
    assert cli_run(["--root", str(logged), "export", "-o", str(good)]).code == 0
    assert good.is_file()


def test_cli_output_outside_the_repository_is_the_users_but_not_through_a_link(
    logged: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "mine.jsonl"
    assert cli_run(["--root", str(logged), "export", "-o", str(mine)]).code == 0
    assert mine.is_file()
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(victim)
    assert_one_error_line(cli_run(["--root", str(logged), "export", "-o", str(link)]), "symlink")
    assert victim.read_text() == "keep\n"


@pytest.mark.parametrize("value", ["/etc", "../outside", "learnings/../../x"])
def test_config_paths_must_stay_in_the_repository(logged: Path, value: str) -> None:
    config = logged / ".lore" / "config.yaml"
    config.write_text(f"paths:\n  actionlog: {json.dumps(value)}\n")
    result = lore("log", "commit", cwd=logged)
    assert result.code == 1, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "paths.actionlog" in lines[0] and "config.yaml:2" in lines[0], lines
    assert not (logged.parent / "outside").exists() and not (logged.parent / "x").exists()
