"""`lore init [DIR]`: the store layout, idempotence, clear refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import clean_env, git, lore

RULE = "actionlog/**/*.jsonl merge=union"


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` (dirs as None), without .git and the derived cache."""
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith((".git/", ".lore/cache")):
            continue
        out[rel] = None if path.is_dir() else path.read_bytes()
    return out


def assert_layout(root: Path) -> None:
    assert (root / ".lore").is_dir()
    assert (root / ".lore" / ".gitignore").read_text() == "cache/\n"
    config = (root / ".lore" / "config.yaml").read_text()
    lines = [line for line in config.splitlines() if line.strip()]
    assert lines and all(line.lstrip().startswith("#") for line in lines)
    assert "idle_minutes: 30" in config and "durability" in config
    assert (root / "actionlog").is_dir()
    assert (root / "learnings" / "drafts").is_dir()
    assert (root / ".expertise").is_dir()
    assert RULE in (root / ".gitattributes").read_text().splitlines()


def test_init_creates_the_layout(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    run = lore("init", str(root))
    assert run.code == 0, run.err
    assert run.err == ""
    assert_layout(root)
    assert run.out.splitlines()[0] == f"Initialised lorebook store in {root.resolve()}"
    for created in (
        ".lore/",
        "actionlog/",
        "learnings/drafts/",
        ".expertise/",
        ".lore/.gitignore",
        ".lore/config.yaml",
        ".gitattributes",
    ):
        assert f"  created {created}" in run.out.splitlines()


def test_init_twice_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    assert lore("init", str(root)).code == 0
    before = snapshot(root)
    run = lore("init", str(root), "--json")
    assert run.code == 0, run.err
    assert run.json() == {"root": str(root.resolve()), "created": []}
    assert snapshot(root) == before
    assert (root / ".gitattributes").read_text().splitlines().count(RULE) == 1
    again = lore("init", str(root))
    assert again.out.strip() == f"lorebook store in {root.resolve()} is already complete"
    assert snapshot(root) == before


def test_init_completes_a_partial_store(store: Path) -> None:
    (store / "learnings" / "drafts" / ".gitkeep").unlink()
    (store / "learnings" / "drafts").rmdir()
    config = store / ".lore" / "config.yaml"
    config.write_text("agent: PS\n")
    run = lore("init", str(store), "--json")
    assert run.code == 0, run.err
    assert run.json()["created"] == ["learnings/drafts/", "learnings/drafts/.gitkeep"]
    assert config.read_text() == "agent: PS\n"  # a person's settings are never overwritten


def test_existing_gitattributes_keeps_its_lines(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    attributes = root / ".gitattributes"
    attributes.write_text("*.png binary\n*.sh text eol=lf")  # no final newline
    assert lore("init", str(root)).code == 0
    lines = attributes.read_text().splitlines()
    assert lines[:2] == ["*.png binary", "*.sh text eol=lf"]
    assert lines.count(RULE) == 1
    assert attributes.read_text().endswith(RULE + "\n")
    assert lore("init", str(root)).code == 0
    assert attributes.read_text().splitlines() == lines


def test_existing_rule_is_not_duplicated(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".gitattributes").write_text(f"{RULE}\n*.md text\n")
    assert lore("init", str(root)).code == 0
    assert (root / ".gitattributes").read_text() == f"{RULE}\n*.md text\n"


def test_union_merge_rule_is_active_for_shards(store: Path) -> None:
    shard = "actionlog/2026/11/22/abc.jsonl"
    out = git(store, "check-attr", "merge", "--", shard)
    assert out.strip() == f"{shard}: merge: union"


def test_init_without_dir_uses_the_git_top_level(repo: Path) -> None:
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    run = lore("init", cwd=sub)
    assert run.code == 0, run.err
    assert_layout(repo)
    assert not (sub / ".lore").exists()


def test_init_honours_root_option_and_lore_root(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    assert lore("--root", str(first), "init").code == 0
    assert_layout(first)
    assert lore("init", env=clean_env(second), cwd=tmp_path).code == 0
    assert_layout(second)


def _assert_one_line_refusal(run, directory: Path) -> None:  # type: ignore[no-untyped-def]
    assert run.code == 1
    assert run.out == ""
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert str(directory) in lines[0]
    assert lines[0].startswith("lore: error: ")


def test_refuses_a_path_under_a_regular_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory\n")
    target = blocker / "sub"
    run = lore("init", str(target))
    _assert_one_line_refusal(run, target)
    assert blocker.read_text() == "not a directory\n"


def test_refuses_a_regular_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    run = lore("init", str(blocker))
    _assert_one_line_refusal(run, blocker)
    assert "not a directory" in run.err


def test_refuses_a_missing_directory(tmp_path: Path) -> None:
    target = tmp_path / "does" / "not" / "exist"
    run = lore("init", str(target))
    _assert_one_line_refusal(run, target)
    assert "does not exist" in run.err
    assert not (tmp_path / "does").exists()


def test_refusal_as_json(tmp_path: Path) -> None:
    target = tmp_path / "missing"
    run = lore("init", str(target), "--json")
    assert run.code == 1
    lines = run.err.strip().splitlines()
    assert len(lines) == 1
    error = json.loads(lines[0])
    assert set(error) == {"error"}
    assert str(target) in error["error"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root bypasses directory permissions")
def test_refuses_a_read_only_directory(tmp_path: Path) -> None:
    target = tmp_path / "ro"
    target.mkdir()
    target.chmod(0o555)
    try:
        run = lore("init", str(target))
        _assert_one_line_refusal(run, target)
        assert "not writable" in run.err
        assert list(target.iterdir()) == []
    finally:
        target.chmod(0o755)
