"""Hardening: no write through a symlink, no read through one that leaves the repository, one
front-matter reader (no alias bomb anywhere), and a depth limit on action contexts."""

from __future__ import annotations

import json
import resource
import shutil
import time
from pathlib import Path

import pytest

from conftest import (
    assert_one_error_line,
    clean_env,
    cli_run,
    git,
    lore,
    shard_files,
    stored_actions,
)
from lorebook import Lorebook
from lorebook.errors import UsageError
from search_fixtures import write_learning

REFUSED = "is a symlink; lorebook does not write through symlinks"
OUTSIDE = "symlink outside the repository"


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{key}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "test@example.invalid")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the repository (the victim of a planted symlink)."""
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# -- 6: writes ---------------------------------------------------------------------------
def test_log_refuses_a_symlinked_shard(store: Path, outside: Path) -> None:
    env = clean_env(store)
    assert lore("log", "commit", "--session", "s1", env=env).code == 0
    (shard,) = shard_files(store)
    victim = outside / "victim"
    victim.write_bytes(b"precious\n")
    shard.unlink()
    shard.symlink_to(victim)
    result = lore("log", "commit", "--session", "s1", env=env)
    assert_one_error_line(result, f"{shard}: {REFUSED}")
    assert victim.read_bytes() == b"precious\n"
    dangling = shard.with_name("s2.jsonl")  # a link to a file that does not exist yet
    dangling.symlink_to(outside / "created")
    assert_one_error_line(lore("log", "commit", "--session", "s2", env=env), REFUSED)
    assert not (outside / "created").exists()


def test_log_refuses_a_symlinked_day_directory(store: Path, outside: Path) -> None:
    # this year's and the next: a run crossing New Year's midnight logs into the next one's
    year = int(time.strftime("%Y", time.gmtime()))
    links = [store / "actionlog" / str(y) for y in (year, year + 1)]
    for link in links:
        link.symlink_to(outside, target_is_directory=True)
    line = assert_one_error_line(lore("log", "commit", env=clean_env(store)), REFUSED)
    assert any(f"{link}: {REFUSED}" in line for link in links), line
    assert _tree(outside) == {}
    api = Lorebook.open(store, env={})
    with pytest.raises(Exception, match="does not write through symlinks"):
        api.log("commit")
    assert _tree(outside) == {}


def test_whole_file_writers_refuse_symlinks(store: Path, outside: Path) -> None:
    env = clean_env(store)
    assert lore("log", "commit", env=env).code == 0
    (store / "docs").mkdir(exist_ok=True)
    (store / "docs" / "reports").symlink_to(outside, target_is_directory=True)
    day = time.strftime("%Y-%m-%d", time.gmtime())
    result = lore("report", "daily", "--date", day, env=env)
    assert_one_error_line(result, f"{store / 'docs' / 'reports'}: {REFUSED}")
    assert _tree(outside) == {}
    # promote would publish to a planted link: refused, the draft stays a draft
    book = Lorebook.open(store, env={})
    lid = book.learnings.new(title="RLS blocks INSERT", body="It failed.").id
    planted = store / "learnings" / f"{lid}.md"
    planted.symlink_to(outside / "published.md")
    result = lore("promote", lid, env=env)
    assert_one_error_line(result, f"{planted}: {REFUSED}")
    assert _tree(outside) == {} and (store / "learnings" / "drafts" / f"{lid}.md").is_file()
    # a new draft into a symlinked drafts folder
    drafts = store / "learnings" / "drafts"
    drafts.rename(store / "learnings" / "kept-drafts")
    drafts.symlink_to(outside, target_is_directory=True)
    result = lore("learn", "new", "--title", "Another lesson", env=env)
    assert_one_error_line(result, f"{drafts}: {REFUSED}")
    assert _tree(outside) == {}


def test_export_and_caches_refuse_symlinked_folders(store: Path, outside: Path) -> None:
    env = clean_env(store)
    assert lore("log", "commit", env=env).code == 0
    cache = store / ".lore" / "cache"
    if cache.exists():
        for path in sorted(cache.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        cache.rmdir()
    cache.symlink_to(outside, target_is_directory=True)
    result = lore("catalog", env=env)
    assert_one_error_line(result, f"{cache}: {REFUSED}")
    assert _tree(outside) == {}
    (store / "docs").mkdir(exist_ok=True)
    training = store / "docs" / "training-data"
    training.symlink_to(outside, target_is_directory=True)
    result = lore("export", "--format", "jsonl", env=env)
    assert_one_error_line(result, REFUSED)
    assert _tree(outside) == {}


def test_archive_refuses_symlinks(store: Path, outside: Path) -> None:
    from datetime import UTC, datetime

    book = Lorebook.open(store, env={})
    book.log("commit", session="old1", now=datetime(2025, 1, 5, tzinfo=UTC))
    book.log("commit", session="old2", now=datetime(2025, 1, 6, tzinfo=UTC))
    linked = store / "actionlog" / "2025" / "01" / "06" / "old2.jsonl"
    (outside / "elsewhere.jsonl").write_bytes(linked.read_bytes())
    linked.unlink()
    linked.symlink_to(outside / "elsewhere.jsonl")  # never copied into the archive
    archive = store / "actionlog" / "archive"
    archive.mkdir(exist_ok=True)
    archive.rename(store / "kept-archive")
    archive.symlink_to(outside, target_is_directory=True)
    result = lore("archive", "--older-than", "30d", "--json", env=clean_env(store))
    assert result.code == 1
    errors = sorted(f["error"] for f in json.loads(result.out)["failed"])
    assert errors == sorted([f"{archive}: {REFUSED}", f"{linked}: {REFUSED}"])
    assert sorted(_tree(outside)) == ["elsewhere.jsonl"]
    assert (store / "actionlog" / "2025" / "01" / "05" / "old1.jsonl").is_file()


def test_check_reports_symlinks_that_leave_the_repository(store: Path, outside: Path) -> None:
    env = clean_env(store)
    assert lore("log", "commit", "--session", "s1", env=env).code == 0
    (shard,) = shard_files(store)
    (outside / "x.jsonl").write_bytes(shard.read_bytes())
    (shard.parent / "s9.jsonl").symlink_to(outside / "x.jsonl")
    (store / "learnings" / "passwd.md").symlink_to("/etc/passwd")
    (store / ".expertise").mkdir(exist_ok=True)
    (store / ".expertise" / "db.yaml").symlink_to(outside / "db.yaml")
    (store / "learnings" / "inside.md").symlink_to(store / "README.md")  # stays inside
    result = lore("check", "--json", env=env)
    assert result.code == 1, result.err
    findings = {(f["path"], f["reason"]) for f in json.loads(result.out)["findings"]}
    rel_shard = str((shard.parent / "s9.jsonl").relative_to(store))
    assert (rel_shard, OUTSIDE) in findings
    assert ("learnings/passwd.md", OUTSIDE) in findings
    assert (".expertise/db.yaml", OUTSIDE) in findings
    assert not any(path == "learnings/inside.md" and reason == OUTSIDE for path, reason in findings)
    human = lore("check", env=env)
    assert human.code == 1 and f"learnings/passwd.md: {OUTSIDE}" in human.out


# -- 7: reads ----------------------------------------------------------------------------
def _learning(learning_id: str, title: str, status: str = "published") -> str:
    return (
        f"---\nid: {learning_id}\ntitle: {title}\nkind: lesson\nstatus: {status}\n"
        f"created: 2026-01-05\n---\n## Key Takeaway\nZebracorn {title}.\n"
    )


def test_symlinked_learnings_outside_the_repository_are_skipped(store: Path, outside: Path) -> None:
    env = clean_env(store)
    (outside / "leak.md").write_text(_learning("leak", "Leaked zebracorn secret notes"))
    (store / "learnings" / "leak.md").symlink_to(outside / "leak.md")
    (store / "learnings" / "passwd.md").symlink_to("/etc/passwd")
    (store / "docs").mkdir(exist_ok=True)
    (store / "docs" / "kept.md").write_text(_learning("kept", "Kept zebracorn advice"))
    (store / "learnings" / "kept.md").symlink_to(store / "docs" / "kept.md")
    listed = lore("learnings", "--json", env=env)
    assert listed.code == 0, listed.err
    assert [item["id"] for item in json.loads(listed.out)] == ["kept"]
    assert f"learnings/leak.md: {OUTSIDE}" in listed.err
    assert f"learnings/passwd.md: {OUTSIDE}" in listed.err
    assert_one_error_line(lore("show", "leak", env=env), f"learnings/leak.md: {OUTSIDE}")
    indexed = lore("index", env=env, timeout=300)
    assert indexed.code == 0, indexed.err
    assert f"learnings/leak.md: {OUTSIDE}" in indexed.err
    found = lore("search", "zebracorn", "--mode", "keyword", "--json", env=env, timeout=300)
    assert found.code == 0, found.err
    assert [r["id"] for r in json.loads(found.out)["results"]] == ["kept"]
    assert "Leaked" not in found.out


@pytest.mark.parametrize("command", ["promote", "reject"])
def test_promote_or_reject_of_a_symlinked_draft_is_one_line(
    store: Path, outside: Path, command: str
) -> None:
    env = clean_env(store)
    (outside / "evil.md").write_text(_learning("evil", "Evil draft", status="draft"))
    draft = store / "learnings" / "drafts" / "evil.md"
    draft.parent.mkdir(parents=True, exist_ok=True)
    draft.symlink_to(outside / "evil.md")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "planted")
    head = git(store, "rev-parse", "HEAD")
    args = [command, "evil"] + (["--reason", "no"] if command == "reject" else [])
    result = lore(*args, env=env)
    assert_one_error_line(result, f"learnings/drafts/evil.md: {OUTSIDE}")
    assert draft.is_symlink() and (outside / "evil.md").read_text().startswith("---\nid: evil")
    assert git(store, "rev-parse", "HEAD") == head


def test_symlinked_expertise_file_outside_is_skipped(store: Path, outside: Path) -> None:
    env = clean_env(store)
    (outside / "db.yaml").write_text("domain: db\noverview: leaked zebracorn\n")
    (store / ".expertise").mkdir(exist_ok=True)
    (store / ".expertise" / "db.yaml").symlink_to(outside / "db.yaml")
    shown = lore("expertise", "show", "db", env=env)
    assert_one_error_line(shown, f".expertise/db.yaml: {OUTSIDE}")
    listed = lore("expertise", "list", "--json", env=env)
    assert "zebracorn" not in listed.out
    assert f".expertise/db.yaml: {OUTSIDE}" in listed.err


# -- 8: one front-matter reader ----------------------------------------------------------
def _bomb(store: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    lines.append("tags: *a9")  # a field the index reads: 9**10 strings once expanded
    (store / "learnings" / "bomb.md").write_text(
        "---\nid: bomb\ntitle: Zebracorn bomb\nstatus: published\ncreated: 2026-11-22\n"
        + "\n".join(lines)
        + "\n---\nZebracorn.\n"
    )


def test_alias_bomb_is_skipped_by_index_search_and_preflight(store: Path) -> None:
    env = clean_env(store)
    write_learning(
        store,
        "rls-anon-insert",
        title="Zebracorn RLS blocks anonymous INSERT",
        created="2026-01-01",
        body="## Key Takeaway\nAdd an INSERT policy.",
    )
    _bomb(store)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    for args in (
        ["index"],
        ["search", "zebracorn", "--json"],
        ["preflight", "zebracorn rls", "--json"],
    ):
        shutil.rmtree(store / ".lore" / "cache", ignore_errors=True)  # each reads the bomb
        # the timeout is for a busy machine loading the model: an expanding bomb never ends
        result = lore(*args, env=env, timeout=240)
        assert result.code == 0, (args, result.err)
        assert "learnings/bomb.md:7: YAML aliases are not allowed" in result.err, result.err
        if args[0] == "search":
            assert [r["id"] for r in json.loads(result.out)["results"]] == ["rls-anon-insert"]
        if args[0] == "preflight":
            assert [x["id"] for x in json.loads(result.out)["learnings"]] == ["rls-anon-insert"]
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # KiB, the largest child this test process ever waited for: a new peak came from these
    # commands and must be small (an earlier test's model export may have set a higher one)
    assert peak_kib == before or peak_kib < 2_000_000  # the bomb was never expanded


def test_index_reads_front_matter_like_the_knowledge_base(store: Path) -> None:
    env = clean_env(store)
    (store / "learnings" / "dup.md").write_text(
        "---\nid: dup\ntitle: Zebracorn one\ntitle: Zebracorn two\nstatus: published\n---\nx\n"
    )
    (store / "learnings" / "plain.md").write_text(
        "---\nid: plain\ntitle: no\nstatus: published\nseverity: null\ncreated: 2026-01-02\n"
        "tags: [zebracorn]\n---\nZebracorn body.\n"
    )
    result = lore("index", env=env, timeout=300)
    assert result.code == 0, result.err
    assert "learnings/dup.md:4: duplicate key 'title'" in result.err
    found = lore("search", "zebracorn", "--mode", "keyword", "--json", env=env, timeout=300)
    results = json.loads(found.out)["results"]
    assert [r["id"] for r in results] == ["plain"]
    assert results[0]["title"] == "no" and results[0]["severity"] is None


# -- 9: nesting depth --------------------------------------------------------------------
DEEP = "too deeply nested"


@pytest.mark.parametrize("levels", [65, 5_000])
def test_deep_context_on_the_command_line_is_one_line(store: Path, levels: int) -> None:
    text = '{"a":' * levels + "1" + "}" * levels
    result = lore("log", "commit", "--context", text, env=clean_env(store))
    assert_one_error_line(result, "--context", DEEP, "64")
    assert shard_files(store) == []


def test_deep_context_from_stdin_file_and_in_process(store: Path, tmp_path: Path) -> None:
    env = clean_env(store)
    deep = "[" * 100_000 + "]" * 100_000
    assert_one_error_line(
        lore("log", "commit", "--context", "-", env=env, stdin=deep), "--context (stdin)", DEEP
    )
    path = tmp_path / "ctx.json"
    path.write_text('{"a": ' * 100_000 + "1" + "}" * 100_000)
    assert_one_error_line(lore("log", "commit", "--context", f"@{path}", env=env), str(path), DEEP)
    # in-process, the store named by `--root`
    in_process = cli_run(
        ["--root", str(store), "log", "commit", "--context", '{"a":' * 5000 + "1" + "}" * 5000]
    )
    assert_one_error_line(in_process, DEEP)
    # strings that look like brackets do not count; 64 levels are fine
    ok = '{"s": "[[[[{{{{\\"[["' + ', "a":' + '{"a":' * 62 + "1" + "}" * 63
    done = lore("log", "commit", "--context", ok, "--json", env=env)
    assert done.code == 0, done.err
    assert stored_actions(store)[0]["context"]["s"] == '[[[[{{{{"[['


def test_deep_context_through_the_api_and_the_configured_limit(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("log:\n  max_depth: 3\n")
    book = Lorebook.open(store, env={})
    with pytest.raises(UsageError, match=DEEP):
        book.log("commit", context={"a": {"b": {"c": {"d": 1}}}})
    deep: dict[str, object] = {}
    node = deep
    for _ in range(100_000):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    with pytest.raises(UsageError, match=DEEP):
        book.log("commit", context=deep)
    book.log("commit", context={"a": {"b": {"c": 1}}})
    result = lore(
        "log", "commit", "--context", '{"a": {"b": {"c": {"d": 1}}}}', env=clean_env(store)
    )
    assert_one_error_line(result, DEEP, "log.max_depth")
    assert len(stored_actions(store)) == 1
